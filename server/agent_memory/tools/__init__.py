"""The MCP adapter: the server factory, the tool specs and descriptions, identity binding, prompts,
resources, sampling and the tool handlers, on top of the protocol-free wire contracts in
`agent_memory.contracts` (models, records, the error mapping)."""
