"""agent-memory as the memory of an AutoGen agent.

    pip install '.[autogen]'   # from a clone of agent-memory
    python examples/autogen_memory.py            # a throwaway store in a temporary directory
    python examples/autogen_memory.py --data-dir ~/.local/share/agent-memory

Launches `agent-memory serve` on stdio as the agent `travel-planner` (team `trips`), stores a few
memories, asks for the relevant ones, and shows the system message `update_context` adds to a model
context: what an AssistantAgent built with `memory=[memory]` sends its model. No model is called.
To use a shared server instead: `MemoryLink.http("http://127.0.0.1:8765/mcp", token)`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile

from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_core.model_context import BufferedChatCompletionContext
from autogen_core.models import UserMessage

from agent_memory.integrations.autogen import AgentMemory
from agent_memory.integrations.mcp_link import MemoryLink

IDENTITY = {"agent_id": "travel-planner", "system_type": "sys1", "team": "trips"}


async def main(data_dir: str) -> None:
    link = MemoryLink.stdio(IDENTITY, env={**os.environ, "MEMORY_DATA_DIR": data_dir})
    memory = AgentMemory(link, k=3)
    try:
        await memory.add(MemoryContent(content="The traveller is vegetarian.", mime_type=MemoryMimeType.TEXT,
                                       metadata={"priority": "high", "tags": ["diet"]}))
        await memory.add(MemoryContent(content="The traveller prefers window seats on trains.",
                                       mime_type=MemoryMimeType.TEXT))
        await memory.add(MemoryContent(content={"home_city": "Lyon", "currency": "EUR"},
                                       mime_type=MemoryMimeType.JSON, metadata={"tags": ["profile"]}))

        found = await memory.query("What food does the traveller eat?")
        print("query results:")
        for item in found.results:
            assert item.metadata is not None
            print(f"  {item.metadata['score']:.2f}  {item.content}")

        # What an AutoGen agent does before each model call: update its model context.
        context = BufferedChatCompletionContext(buffer_size=10)
        await context.add_message(UserMessage(content="Book dinner tonight: what food does the traveller eat?",
                                                  source="user"))
        await memory.update_context(context)
        print("model context:")
        for message in await context.get_messages():
            print(f"  {type(message).__name__}: {message.content!r}")
    finally:
        await memory.clear()  # only what travel-planner owns in its own namespace
        await memory.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", help="agent-memory data directory (default: a temporary one)")
    args = parser.parse_args()
    if args.data_dir:
        asyncio.run(main(os.path.expanduser(args.data_dir)))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(tmp))
