"""`agent-memory console` beside a server already running on the same data directory (as
docs/console.md and docs/storage.md say it may run): the server owns the vector index, the console
logs `vector_index_owned_elsewhere` and answers searches by meaning through the owner, not
degraded, with what the server wrote; what the console writes is found by both."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.e2e.servers import (
    INDEXED,
    SECRET,
    agent_memory_command,
    free_port,
    http_client,
    http_server,
    retrieve,
    server_env,
    token,
    wait_for_port,
)

pytestmark = pytest.mark.anyio

QUESTION = "which animals are active at night?"


async def _create(client: Client, text: str) -> str:
    made = await client.call_tool("memory_crud", {"action": "create", "items": [{"content": text}]})
    assert not made.is_error, made.structured_content
    return made.structured_content["items"][0]["id"]


async def _finds_by_meaning(client: Client, ids: set[str]) -> None:
    with anyio.fail_after(90):
        while True:
            found = await retrieve(client, QUESTION)
            if found["degraded"] is None and {i["id"] for i in found["items"]} >= ids:
                return
            await anyio.sleep(0.2)


async def test_a_console_beside_a_running_server_searches_by_meaning_through_the_owner(tmp_path: Path) -> None:
    data, bearer = tmp_path / "data", token("alice")
    with http_server(data, **INDEXED) as server_url:
        async with http_client(server_url, bearer) as server:
            written = {await _create(server, "Owls hunt silently at night.")}
            await _finds_by_meaning(server, written)  # the server owns the index and has indexed it
            port, log_path = free_port(), tmp_path / "console.log"
            env = server_env(data, MEMORY_AUTH_SECRET=SECRET, **INDEXED)
            with log_path.open("w") as log:
                console = subprocess.Popen([agent_memory_command(), "console", "--port", str(port)], env=env,
                                           stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log)
            try:
                wait_for_port(console, port, log_path)
                async with http_client(f"http://127.0.0.1:{port}/mcp", bearer) as beside:
                    await _finds_by_meaning(beside, written)
                    written.add(await _create(beside, "Bats find insects by echolocation in the dark."))
                    await _finds_by_meaning(beside, written)
                    await _finds_by_meaning(server, written)
            finally:
                console.terminate()
                console.wait(timeout=20)
                if console.stdin is not None:
                    console.stdin.close()
    events = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    assert "vector_index_owned_elsewhere" in {e["event"] for e in events}
    assert [e for e in events if e["level"] in ("warning", "error")] == []
