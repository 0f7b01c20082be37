"""`agent-memory reindex` rebuilds the vector index from SQLite, and refuses while a server owns it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import INDEXED, agent_memory_command, server_env

pytestmark = pytest.mark.anyio


async def _semantic_ids(client: Client, query: str) -> list[str] | None:
    result = await client.call_tool("memory_retrieve", {"query": query, "mode": "semantic", "min_score": 0})
    data = result.structured_content
    return None if data["degraded"] else [i["id"] for i in data["items"]]


async def test_reindex_rebuilds_a_deleted_index_and_refuses_while_a_server_owns_it(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", **INDEXED)
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        made = await client.call_tool("memory_crud", {"action": "create", "items": [
            {"content": "Bees communicate by dancing."}, {"content": "The printer on floor 3 jams often."}]})
        bees = made.structured_content["items"][0]["id"]
        with anyio.fail_after(60):
            while (await _semantic_ids(client, "how do insects share directions?")) is None:
                await anyio.sleep(0.2)
        busy = subprocess.run([agent_memory_command(), "reindex"], env=env, capture_output=True, text=True,
                              timeout=120)
        assert busy.returncode == 1 and "owns the vector index" in busy.stderr
    shutil.rmtree(tmp_path / "data" / "chroma")
    done = subprocess.run([agent_memory_command(), "reindex"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and "reindex: 2/2" in done.stderr
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        with anyio.fail_after(60):
            while (ids := await _semantic_ids(client, "how do insects share directions?")) is None:
                await anyio.sleep(0.2)
        assert ids[0] == bees
