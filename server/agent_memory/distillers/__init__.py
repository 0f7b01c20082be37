"""Distillers: models that turn a session's turns into facts and rules (the core's `Distiller`
port). What any model's answer must be before it becomes an insight (`answers`), and the
OpenAI-compatible chat endpoint of a local model runtime (`chat_model`). The client's own model,
asked through MCP sampling, is the MCP adapter's (`tools/sampling.py`) and reads its answer here too.
"""
