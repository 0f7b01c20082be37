"""Two server processes on one data directory: one owns the vector index, the other leaves its
vector changes in the shared outbox, which the owner applies."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import agent_memory_command, server_env

pytestmark = pytest.mark.anyio


async def _retrieve(client: Client, query: str, mode: str = "semantic") -> dict:
    result = await client.call_tool("memory_retrieve", {"query": query, "mode": mode, "limit": 10})
    assert not result.is_error, result.structured_content
    return result.structured_content


async def test_the_owner_indexes_what_another_process_writes(tmp_path: Path) -> None:
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"],
                                   env=server_env(tmp_path / "data", MEMORY_RATE_LIMIT_PER_SECOND="0"))
    async with Client(params, mode="legacy", read_timeout_seconds=60) as owner:
        made = await owner.call_tool("memory_crud", {"action": "create",
                                                     "items": [{"content": "Owls hunt silently at night."}]})
        written = {made.structured_content["items"][0]["id"]}
        with anyio.fail_after(60):  # the first process has taken the vector directory and indexed it
            while (await _retrieve(owner, "owls"))["degraded"] is not None:
                await anyio.sleep(0.2)
        async with Client(params, mode="legacy", read_timeout_seconds=60) as other:
            for text in ("Bats find insects by echolocation in the dark.",
                         "Fireflies flash to attract mates after dusk."):
                made = await other.call_tool("memory_crud", {"action": "create", "items": [{"content": text}]})
                written.add(made.structured_content["items"][0]["id"])
            with anyio.fail_after(60):
                while "owns the vector index" not in ((await _retrieve(other, "night"))["degraded"] or ""):
                    await anyio.sleep(0.2)
            assert {i["id"] for i in (await _retrieve(other, "night dark dusk", "keyword"))["items"]} == written
            with anyio.fail_after(60):
                while True:
                    found = await _retrieve(owner, "which animals are active at night?")
                    if found["degraded"] is None and {i["id"] for i in found["items"]} >= written:
                        break
                    await anyio.sleep(0.2)
