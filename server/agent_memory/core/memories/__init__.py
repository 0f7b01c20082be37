"""Memories written and read by id: create, read, update, delete, list, promote (memory_crud),
browsing, conflicts and their reconciling, supersede chains, pruning, and secrets kept out."""
