"""Two server processes on one data directory: one owns the vector index and answers semantic
queries for the other; the other's vector changes wait in the shared outbox for the owner, and it
takes the index over when the owner exits."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import INDEXED, agent_memory_command, retrieve, server_env

pytestmark = pytest.mark.anyio

ANIMALS = ("Owls hunt silently at night.",
           "Bats find insects by echolocation in the dark.",
           "Fireflies flash to attract mates after dusk.",
           "Hedgehogs forage for beetles after sunset.")
QUESTION = "which animals are active at night?"


async def _create(client: Client, text: str) -> str:
    made = await client.call_tool("memory_crud", {"action": "create", "items": [{"content": text}]})
    assert not made.is_error, made.structured_content
    return made.structured_content["items"][0]["id"]


async def _finds_semantically(client: Client, ids: set[str]) -> dict:
    """Waits until a semantic search (no query word in common with the entries) finds all `ids`
    and is not degraded."""
    with anyio.fail_after(60):
        while True:
            found = await retrieve(client, QUESTION)
            if found["degraded"] is None and {i["id"] for i in found["items"]} >= ids:
                return found
            await anyio.sleep(0.2)


async def test_both_processes_search_semantically_and_the_other_takes_over(tmp_path: Path) -> None:
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"],
                                   env=server_env(tmp_path / "data", MEMORY_RATE_LIMIT_PER_SECOND="0", **INDEXED))
    lock = tmp_path / "data" / "chroma.lock"
    clients: list[Client] = []
    started, stop, stopped = anyio.Event(), anyio.Event(), anyio.Event()

    async def first_process() -> None:  # its own task, so it can exit while the second runs on
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            clients.append(client)
            started.set()
            await stop.wait()
        stopped.set()

    async with anyio.create_task_group() as group:
        group.start_soon(first_process)
        await started.wait()
        owner = clients[0]
        written = {await _create(owner, ANIMALS[0])}
        await _finds_semantically(owner, written)  # the first process owns the index and has indexed it
        owner_pid = lock.read_text().strip()
        async with Client(params, mode="legacy", read_timeout_seconds=60) as other:
            written |= {await _create(other, text) for text in ANIMALS[1:3]}
            # Both search semantically; the owner indexed what `other` wrote and answers for it.
            from_other = await _finds_semantically(other, written)
            from_owner = await _finds_semantically(owner, written)
            assert [i["id"] for i in from_other["items"]] == [i["id"] for i in from_owner["items"]]
            keyword = await retrieve(other, "night dark dusk", "keyword")
            assert {i["id"] for i in keyword["items"]} == written
            assert lock.read_text().strip() == owner_pid
            # The owner exits: `other` takes the directory over, indexes its own new write and
            # keeps answering semantically.
            stop.set()
            await stopped.wait()
            written.add(await _create(other, ANIMALS[3]))
            await _finds_semantically(other, written)
            assert lock.read_text().strip() not in ("", owner_pid)
