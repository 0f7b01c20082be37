"""agent-memory as the memory of agent frameworks, over MCP.

`agent_memory.integrations.autogen` (extra `autogen`) and `agent_memory.integrations.langgraph`
(extra `langgraph`) import their framework on import; nothing here does, so `import agent_memory`
never needs either.
"""
