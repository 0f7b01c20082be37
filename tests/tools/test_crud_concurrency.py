"""Optimistic concurrency with writers that really overlap: two independent server instances
(separate SQLite connections, as two processes would have) on one database file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import pytest
from mcp import Client

from agent_memory.config import Settings
from agent_memory.tools.server import create_server
from tests.conftest import Agent

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def two_servers(settings: Settings, mode: str) -> AsyncIterator[tuple[Agent, Agent]]:
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(Client(create_server(settings), mode=mode))
        second = await stack.enter_async_context(Client(create_server(settings), mode=mode))
        yield Agent(first), Agent(second)


async def test_two_writers_with_the_same_if_match_exactly_one_wins(settings: Settings, mode: str) -> None:
    async with two_servers(settings, mode) as (a, b):
        entry = await a.create("shared starting point")
        results: dict[str, tuple[bool, dict]] = {}
        ready = anyio.Event()

        async def write(name: str, agent: Agent) -> None:
            await ready.wait()
            results[name] = await agent.crud(
                action="update", items=[{"id": entry["id"], "content": f"written by {name}"}], if_match=entry["etag"]
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(write, "a", a)
            tg.start_soon(write, "b", b)
            ready.set()

        outcomes = sorted((failed, data["errors"][0]["code"] if failed else "ok") for failed, data in results.values())
        assert outcomes == [(False, "ok"), (True, "CONFLICT")]
        winner = next(n for n, (failed, _) in results.items() if not failed)
        loser_error = next(data["errors"][0] for failed, data in results.values() if failed)
        assert loser_error["details"]["current_version"] == 2
        _, current = await a.crud(action="read", items=[{"id": entry["id"]}])
        assert current["items"][0]["content"] == f"written by {winner}"
        assert current["items"][0]["etag"] == loser_error["details"]["current_etag"]
        _, conflict = await b.crud(action="read", items=[{"id": loser_error["details"]["conflict_id"]}])
        assert conflict["items"][0]["conflict_of"] == entry["id"]


async def test_twenty_concurrent_unconditional_updates_lose_no_increment(settings: Settings, mode: str) -> None:
    async with two_servers(settings, mode) as (a, b):
        entry = await a.create("counter")
        versions: list[int] = []
        etags: list[str] = []

        async def bump(agent: Agent, i: int) -> None:
            failed, data = await agent.crud(action="update", items=[{"id": entry["id"], "content": f"update {i}"}])
            assert not failed, data
            versions.append(data["items"][0]["version"])
            etags.append(data["items"][0]["etag"])

        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(bump, a if i % 2 else b, i)

        _, current = await a.crud(action="read", items=[{"id": entry["id"]}])
        assert current["items"][0]["version"] == 21
        assert sorted(versions) == list(range(2, 22))
        assert len(set(etags)) == 20
