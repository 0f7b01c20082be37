"""The domain: models, errors, ports, permissions and services.

Imports only the standard library (and nothing from mcp, aiosqlite or chromadb).
"""
