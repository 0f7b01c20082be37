"""The wire contracts the MCP tools, the memory console and the operator commands share, free of
any protocol: the pydantic request and result models (the source of `schemas/`), an entry's wire
form, and the mapping of failures to `{code, message, details}`. `tools/` is the MCP adapter on
top; nothing here imports `mcp`."""
