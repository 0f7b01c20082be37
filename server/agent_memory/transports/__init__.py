"""Transports: serving MCP over stdio and streamable HTTP (bearer tokens, the public paths), with
the console mounted beside the MCP endpoint."""
