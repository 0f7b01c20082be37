"""agent-memory: an MCP server that gives AI agents scoped, permissioned, auditable memory."""

__version__ = "0.1.0"
