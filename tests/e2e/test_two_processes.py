"""Two `agent-memory serve` processes on one data directory race on the same etag."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import agent_memory_command, server_env

pytestmark = pytest.mark.anyio


async def test_if_match_race_between_processes_has_exactly_one_winner(tmp_path: Path) -> None:
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=server_env(tmp_path))
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(Client(params, mode="legacy", read_timeout_seconds=30))
        second = await stack.enter_async_context(Client(params, mode="legacy", read_timeout_seconds=30))
        created = await first.call_tool("memory_crud", {"action": "create", "items": [{"content": "v1"}]})
        entry = created.structured_content["items"][0]
        outcomes: list[tuple[str, bool, dict]] = []
        ready = anyio.Event()

        async def race(name: str, client: Client) -> None:
            await ready.wait()
            result = await client.call_tool("memory_crud", {
                "action": "update", "if_match": entry["etag"], "items": [{"id": entry["id"], "content": name}]})
            outcomes.append((name, bool(result.is_error), result.structured_content))

        for _ in range(10):  # several rounds, so the two processes really contend
            async with anyio.create_task_group() as tg:
                tg.start_soon(race, "first", first)
                tg.start_soon(race, "second", second)
                ready.set()
            ready = anyio.Event()
            current = await second.call_tool("memory_crud", {"action": "read", "items": [{"id": entry["id"]}]})
            entry = current.structured_content["items"][0]
            round_outcomes, outcomes = outcomes, []
            assert sorted(failed for _, failed, _ in round_outcomes) == [False, True]
            winner = next(name for name, failed, _ in round_outcomes if not failed)
            loser = next(data for _, failed, data in round_outcomes if failed)
            assert entry["content"] == winner
            assert loser["errors"][0]["code"] == "CONFLICT"
            assert loser["errors"][0]["details"]["current_etag"] == entry["etag"]
        assert entry["version"] == 11
        conflicts = await first.call_tool("memory_crud", {"action": "list", "filters": {"conflict": True}})
        assert len(conflicts.structured_content["items"]) == 10
