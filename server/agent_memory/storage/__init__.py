"""Adapters implementing the core ports."""
