"""The MCP layer: server factory, identity resolution, contracts, handlers and error mapping."""
