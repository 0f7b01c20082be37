"""Keyed entries (memory_crud create's `key`): one entry per key in a place, whoever writes it and
however many write at once; the store's unique index decides, not a lookup before the write."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import pytest
from mcp import Client

from agent_memory.config import Settings
from agent_memory.tools.server import create_server
from tests.conftest import Agent, audit_rows, identity, scalar

pytestmark = pytest.mark.anyio


async def keyed(agent: Agent, key: str, *, scope: str = "agent", namespace: str | None = None) -> list[dict]:
    arguments = {"scope": scope, **({"namespace": namespace} if namespace else {})}
    failed, data = await agent.crud(action="list", filters={"key": key}, **arguments)
    assert not failed, data
    return data["items"]


async def test_creating_a_key_twice_updates_the_one_entry_to_version_two(agent: Agent) -> None:
    first = await agent.create("first value", item={"key": "profile/summary", "tags": ["a"]})
    second = await agent.create("second value", item={"key": "profile/summary", "tags": ["b"]})
    assert second["id"] == first["id"] and second["key"] == "profile/summary"
    assert (second["version"], second["content"], second["tags"]) == (2, "second value", ["b"])
    assert second["etag"] != first["etag"] and second["created_at"] == first["created_at"]
    assert [e["id"] for e in await keyed(agent, "profile/summary")] == [first["id"]]
    failed, data = await agent.crud(action="read", items=[{"id": first["id"]}])
    assert not failed and data["items"][0]["content"] == "second value" and data["items"][0]["version"] == 2


async def test_a_key_is_its_own_in_each_scope_and_namespace_and_unkeyed_entries_never_merge(agent: Agent) -> None:
    mine = await agent.create("mine", item={"key": "k"})
    elsewhere = await agent.create("elsewhere", namespace="alice/notes", item={"key": "k"})
    team = await agent.as_(identity("lead", "sys3", "red")).create("team", scope="team", namespace="red",
                                                                   layer="long_term", item={"key": "k"})
    plain = [await agent.create("same text"), await agent.create("same text")]
    assert len({mine["id"], elsewhere["id"], team["id"], *(p["id"] for p in plain)}) == 5
    assert all(p["key"] is None for p in plain)


async def test_a_bulk_create_naming_one_key_twice_leaves_one_entry_with_the_last_value(agent: Agent) -> None:
    failed, data = await agent.crud(action="create", items=[{"content": "one", "key": "k"},
                                                            {"content": "two", "key": "k"}])
    assert not failed, data
    assert [e["version"] for e in data["items"]] == [1, 2]
    [entry] = await keyed(agent, "k")
    assert entry["content"] == "two"


async def test_a_keyed_update_is_audited_as_a_create_of_the_entry_it_changed(settings: Settings, mode: str) -> None:
    async with Client(create_server(settings), mode=mode) as client:
        agent = Agent(client)
        first = await agent.create("v1", item={"key": "k"})
        await agent.create("v2", item={"key": "k"})
    rows = [r for r in audit_rows(settings) if r["action"] == "create"]
    assert [r["entry_id"] for r in rows] == [first["id"], first["id"]]
    assert [r["outcome"] for r in rows] == ["ok", "ok"]


@asynccontextmanager
async def servers(settings: Settings, mode: str, count: int) -> AsyncIterator[list[Agent]]:
    async with AsyncExitStack() as stack:
        yield [Agent(await stack.enter_async_context(Client(create_server(settings), mode=mode)))
               for _ in range(count)]


async def test_concurrent_creates_of_one_key_from_several_clients_leave_exactly_one_entry(
        settings: Settings, mode: str) -> None:
    async with servers(settings, mode, 3) as agents:
        for round_ in range(3):
            key = f"race-{round_}"
            written: list[dict] = []
            ready = anyio.Event()

            async def write(n: int, agent: Agent, key: str = key, written: list[dict] = written,
                            ready: anyio.Event = ready) -> None:
                await ready.wait()
                failed, data = await agent.crud(action="create", items=[{"content": f"writer {n}", "key": key}])
                assert not failed, data
                written.append(data["items"][0])

            async with anyio.create_task_group() as tg:
                for n in range(6):
                    tg.start_soon(write, n, agents[n % 3])
                ready.set()
            entries = await keyed(agents[0], key)
            assert len(entries) == 1 and len({e["id"] for e in written}) == 1
            assert entries[0]["version"] == 6 == max(e["version"] for e in written)
            assert entries[0]["content"] in {f"writer {n}" for n in range(6)}


async def test_a_key_in_a_place_the_caller_cannot_write_is_forbidden_and_changes_nothing(agent: Agent) -> None:
    lead = agent.as_(identity("lead", "sys3", "red"))
    entry = await lead.create("team value", scope="team", namespace="red", layer="long_term", item={"key": "k"})
    for caller in (identity("member", "sys1", "red"), identity("outsider", "sys3", "blue")):
        failed, data = await agent.as_(caller).crud(action="create", scope="team", namespace="red",
                                                   layer="long_term", items=[{"content": "hijack", "key": "k"}])
        assert failed and data["errors"][0]["code"] == "FORBIDDEN"
    [current] = await keyed(lead, "k", scope="team", namespace="red")
    assert (current["id"], current["content"], current["version"]) == (entry["id"], "team value", 1)


@pytest.mark.parametrize("key", ["", "x" * 257, "bad\x00key", "lone \ud800 surrogate"])
async def test_an_invalid_key_is_invalid_params_naming_the_field(agent: Agent, key: str) -> None:
    failed, data = await agent.crud(action="create", items=[{"content": "c", "key": key}])
    assert failed
    error = data["errors"][0]
    assert error["code"] == "INVALID_PARAMS" and "key" in error["details"]["field"], error
    failed, data = await agent.crud(action="list", filters={"key": key})
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert "key" in data["errors"][0]["details"]["field"]


async def test_a_conflict_copy_and_a_promoted_copy_do_not_take_the_key(agent: Agent) -> None:
    entry = await agent.create("v1", item={"key": "k"})
    failed, data = await agent.crud(action="update", items=[{"id": entry["id"], "content": "stale"}],
                                    if_match="not-the-etag")
    assert failed and data["errors"][0]["code"] == "CONFLICT"
    failed, data = await agent.crud(action="read", items=[{"id": data["errors"][0]["details"]["conflict_id"]}])
    assert not failed and data["items"][0]["key"] is None
    sys3 = agent.as_(identity("alice", "sys3", "red"))
    failed, data = await sys3.crud(action="promote", items=[{"id": entry["id"], "target_scope": "team",
                                                             "target_namespace": "red"}])
    assert not failed and data["items"][0]["key"] is None
    assert [e["id"] for e in await keyed(agent, "k")] == [entry["id"]]


def write_sql(settings: Settings, sql: str) -> None:
    """Run one portable statement on either store and commit it (what no tool call can do)."""
    if settings.backend == "postgres":
        import psycopg

        with psycopg.connect(settings.postgres_url) as pg:
            pg.execute(sql)
        return
    with sqlite3.connect(settings.sqlite_file) as db:
        db.execute(sql)


async def test_a_key_held_by_another_owners_entry_in_my_namespace_is_forbidden_and_kept(
        settings: Settings, mode: str) -> None:
    async with Client(create_server(settings), mode=mode) as client:
        agent = Agent(client)
        entry = await agent.create("written for alice by someone else", item={"key": "k"})
        write_sql(settings, f"UPDATE entries SET owner_agent_id = 'operator' WHERE id = '{entry['id']}'")
        failed, data = await agent.crud(action="create", items=[{"content": "mine", "key": "k"}])
        assert failed and data["errors"][0]["code"] == "FORBIDDEN"
        assert data["errors"][0]["details"]["field"] == "key"
    assert scalar(settings, f"SELECT content FROM entries WHERE id = '{entry['id']}'") == entry["content"]
    assert scalar(settings, "SELECT COUNT(*) FROM entries") == 1


async def test_read_by_key_returns_the_entry_holding_it_or_not_found(agent: Agent) -> None:
    entry = await agent.create("value", item={"key": "k"})
    failed, data = await agent.crud(action="read", filters={"key": "k"})
    assert not failed and [e["id"] for e in data["items"]] == [entry["id"]]
    failed, data = await agent.crud(action="read", filters={"key": "absent"})
    assert failed and data["errors"][0]["code"] == "NOT_FOUND" and data["errors"][0]["details"]["key"] == "absent"
    failed, data = await agent.crud(action="read", items=[{"id": entry["id"]}], filters={"key": "k"})
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert data["errors"][0]["details"]["field"] == "filters.key"
