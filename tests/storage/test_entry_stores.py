"""The entry ports' contract on every record store (tests/storage/stores.py): compare-and-swap
under concurrent writers, rollback, visibility areas, list filters, browse and the audit trail."""

from __future__ import annotations

import threading
from dataclasses import replace

import anyio
import pytest

from agent_memory.core.access.visibility import Area
from agent_memory.core.model.commands import EntryChange, NewEntry
from agent_memory.core.model.cursor import Position
from agent_memory.core.model.errors import Conflict, Forbidden, NotFound
from agent_memory.core.model.ids import new_etag
from agent_memory.core.model.models import AuditEvent, Entry, Layer, ListFilters, Scope
from agent_memory.core.ports import BrowseQuery, ListQuery, WriteTransaction
from tests.storage.stores import ALICE, ALICE_OF_BLUE, BOB_OF_BLUE, CAROL, Store, postgres_store, stored

pytestmark = pytest.mark.anyio


async def test_concurrent_writers_with_one_etag_exactly_one_wins(store: Store) -> None:
    made = await store.crud.create(ALICE, Scope.AGENT, "alice", NewEntry("v1"))
    outcomes: list[str] = []

    async def update(n: int) -> None:
        try:
            await store.crud.update(ALICE, Scope.AGENT, "alice",
                                    EntryChange(made.id, {"content": f"v2 by {n}"}, if_match=made.etag))
            outcomes.append("ok")
        except Conflict:
            outcomes.append("conflict")

    async with anyio.create_task_group() as tg:
        for n in range(8):
            tg.start_soon(update, n)
    assert sorted(outcomes) == ["conflict"] * 7 + ["ok"]
    assert (await store.crud.read(ALICE, Scope.AGENT, "alice", made.id)).version == 2


async def test_a_transaction_that_raises_leaves_nothing_behind(store: Store) -> None:
    entry = stored(Scope.AGENT, "alice")
    before = await store.audit_rows()

    def work(tx: WriteTransaction) -> None:
        tx.insert(entry)
        tx.enqueue_vector(entry, "upsert")
        tx.audit(AuditEvent("2026-01-02T03:04:05.000Z", "req_x", "alice", "red", "sys1", "memory_crud", "create",
                            "agent", "alice", entry.id, "ok"))
        raise RuntimeError("changed my mind")

    with pytest.raises(RuntimeError, match="changed my mind"):
        await store.repo.transact(work)
    assert await store.repo.get_many([entry.id]) == {}
    assert await store.audit_rows() == before


async def test_areas_match_namespaces_exactly_case_sensitively_and_by_subtree(store: Store) -> None:
    team_spaces = ["red", "red/ops", "red/ops/deep", "red2", "RED", "Red/ops", "red-x", "red.x", "red_ops", "redteam",
                   "red%", "blue", "blue/red"]
    team = {ns: stored(Scope.TEAM, ns, team=None) for ns in team_spaces}
    agent = [stored(Scope.AGENT, "alice"), stored(Scope.AGENT, "alice/notes"),
             stored(Scope.AGENT, "alice", team="blue"), stored(Scope.AGENT, "alice2"),
             stored(Scope.AGENT, "alice", owner="bob")]

    def work(tx: WriteTransaction) -> None:
        for entry in [*team.values(), *agent]:
            tx.insert(entry)

    await store.repo.transact(work)

    async def ids(area: Area) -> set[str]:
        page = await store.repo.list_page(ListQuery(area, ListFilters(), "2026-06-01T00:00:00.000Z"), None, 100)
        return {e.id for e in page}

    def team_ids(*names: str) -> set[str]:
        return {team[n].id for n in names}

    assert await ids(Area(Scope.TEAM, "red", subtree=True)) == team_ids("red", "red/ops", "red/ops/deep")
    assert await ids(Area(Scope.TEAM, "red")) == team_ids("red")
    assert await ids(Area(Scope.TEAM, "RED", subtree=True)) == team_ids("RED")
    assert await ids(Area(Scope.TEAM, "red2", subtree=True)) == team_ids("red2")
    assert await ids(Area(Scope.TEAM, "red_ops")) == team_ids("red_ops")
    assert await ids(Area(Scope.TEAM, "red%")) == team_ids("red%")
    assert await ids(Area(Scope.TEAM, "blue", subtree=True)) == team_ids("blue", "blue/red")
    assert await ids(Area(Scope.AGENT, "alice", subtree=True, owner="alice", team="red")) == {
        agent[0].id, agent[1].id}
    assert await ids(Area(Scope.AGENT, "alice", subtree=True, owner="alice", team="blue")) == {agent[2].id}
    # Through the service: team blue never reads team red, and an agent id reused in team blue
    # sees none of red alice's entries.
    with pytest.raises(Forbidden):
        await store.crud.list(BOB_OF_BLUE, Scope.TEAM, "red", ListFilters(), None, 25)
    with pytest.raises(NotFound):
        await store.crud.read(ALICE_OF_BLUE, Scope.AGENT, "alice", agent[0].id)
    blue_alice = await store.crud.list(ALICE_OF_BLUE, Scope.AGENT, "alice", ListFilters(), None, 25, subtree=True)
    assert [e.id for e in blue_alice.items] == [agent[2].id]
    red_alice = await store.crud.list(ALICE, Scope.TEAM, "red", ListFilters(), None, 25, subtree=True)
    assert {e.id for e in red_alice.items} == team_ids("red", "red/ops", "red/ops/deep")


async def test_list_filters_by_time_expiry_owner_and_conflict(store: Store) -> None:
    early, late = stored(Scope.TEAM, "red", team=None), stored(Scope.TEAM, "red", team=None, owner="bob")
    early = replace(early, created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z")
    late = replace(late, created_at="2026-03-01T00:00:00.000Z", updated_at="2026-03-01T00:00:00.000Z")
    gone = replace(stored(Scope.TEAM, "red", team=None), expires_at="2026-02-01T00:00:00.000Z")
    disputed = replace(stored(Scope.TEAM, "red", team=None), conflict=True, conflict_of=early.id)

    def work(tx: WriteTransaction) -> None:
        for entry in (early, late, gone, disputed):
            tx.insert(entry)

    await store.repo.transact(work)

    async def ids(filters: ListFilters) -> list[str]:
        query = ListQuery(Area(Scope.TEAM, "red"), filters, "2026-06-01T00:00:00.000Z")
        return [e.id for e in await store.repo.list_page(query, None, 100)]

    assert set(await ids(ListFilters())) == {early.id, late.id, disputed.id}
    assert gone.id in await ids(ListFilters(include_expired=True))
    assert await ids(ListFilters(created_after="2026-02-01T00:00:00.000Z")) == [late.id]
    assert await ids(ListFilters(created_before="2026-01-02T00:00:00.000Z")) == [early.id]
    assert await ids(ListFilters(owner_agent_id="bob")) == [late.id]
    assert await ids(ListFilters(conflict=True)) == [disputed.id]
    assert (await store.repo.get_many([disputed.id]))[disputed.id] == disputed


async def test_browse_pages_across_areas_and_splits_superseded_facts(store: Store) -> None:
    red, ops, red2 = (stored(Scope.TEAM, ns, team=None) for ns in ("red", "red/ops", "red2"))
    old = replace(stored(Scope.AGENT, "alice"), superseded_by=red.id)
    times = iter(f"2026-01-0{n}T00:00:00.000Z" for n in range(1, 10))

    def work(tx: WriteTransaction) -> None:
        for entry in (red, ops, red2, old, stored(Scope.AGENT, "alice", team="blue")):
            at = next(times)
            tx.insert(replace(entry, created_at=at, updated_at=at))

    await store.repo.transact(work)
    areas = (Area(Scope.TEAM, "red", subtree=True), Area(Scope.AGENT, "alice", subtree=True, owner="alice", team="red"))

    async def browse(superseded: bool | None, after: Position | None = None, limit: int = 10) -> list[Entry]:
        query = BrowseQuery(areas=areas, filters=ListFilters(), superseded=superseded, now="2026-06-01T00:00:00.000Z")
        return await store.browse.browse_page(query, after, limit)

    first = await browse(None, limit=2)
    assert [e.id for e in first] == [old.id, ops.id]
    rest = await browse(None, Position(first[-1].created_at, first[-1].id))
    assert [e.id for e in rest] == [red.id]
    assert [e.id for e in await browse(True)] == [old.id]
    assert [e.id for e in await browse(False)] == [ops.id, red.id]


async def test_audit_rows_record_writes_reads_and_denials(store: Store) -> None:
    made = await store.crud.create(CAROL, Scope.TEAM, "red", NewEntry("team fact", layer=Layer.LONG_TERM))
    await store.crud.read(ALICE, Scope.TEAM, "red", made.id)
    await store.crud.update(CAROL, Scope.TEAM, "red", EntryChange(made.id, {"content": "new"}, if_match=made.etag))
    with pytest.raises(Forbidden):
        await store.crud.read(BOB_OF_BLUE, Scope.TEAM, "red", made.id)
    await store.crud.list(ALICE, Scope.TEAM, "red", ListFilters(), None, 25)
    rows = await store.audit_rows()
    assert sorted(rows, key=str) == sorted([
        ("create", "ok", "red", made.id, "carol"),
        ("read", "ok", "red", made.id, "alice"),
        ("update", "ok", "red", made.id, "carol"),
        ("read", "denied", "red", None, "bob"),
        ("list", "ok", "red", None, "alice"),
    ], key=str)


async def test_postgres_transactions_that_read_one_version_only_one_replaces(postgres_url: str) -> None:
    """Two transactions really interleaved, each holding version 1 (read before either writes): the
    second's compare-and-swap waits for the first's row lock, then finds the etag changed. And a
    transaction's `get` locks the entry: a writer that reads inside its transaction waits for the
    other's commit and reads what committed (as under SQLite's single writer)."""
    async with postgres_store(postgres_url) as pg:
        made = await pg.crud.create(ALICE, Scope.AGENT, "alice", NewEntry("v1"))
        current = (await pg.repo.get_many([made.id]))[made.id]
        both_ready = threading.Barrier(2, timeout=10)

        def work(tx: WriteTransaction) -> bool:
            both_ready.wait()
            return tx.replace(replace(current, content="v2", version=2, etag=new_etag()), expected_etag=current.etag)

        results: list[bool] = []

        async def run() -> None:
            results.append(await pg.repo.transact(work))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            tg.start_soon(run)
        assert sorted(results) == [False, True]
        assert (await pg.repo.get_many([made.id]))[made.id].version == 2

        seen: list[int] = []
        first_read = threading.Event()

        def read_then_write(tx: WriteTransaction) -> None:
            now = tx.get(made.id)
            assert now is not None
            first_read.set()
            seen.append(now.version)
            assert tx.replace(replace(now, content=f"v{now.version + 1}", version=now.version + 1,
                                      etag=new_etag()), expected_etag=now.etag)

        async with anyio.create_task_group() as tg:
            tg.start_soon(pg.repo.transact, read_then_write)
            await anyio.to_thread.run_sync(first_read.wait)
            tg.start_soon(pg.repo.transact, read_then_write)
        assert seen == [2, 3]
