"""Pruning and erase on a real SQLite file and a real PostgreSQL (each test on both): what goes, in
which order, what never goes, audit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_memory.core.memories.crud import CrudService
from agent_memory.core.memories.pruning import Actor, PruneService, Retention
from agent_memory.core.memories.secrets import Redactor
from agent_memory.core.model.clock import utc_now
from agent_memory.core.model.commands import Call, EntryChange, NewEntry
from agent_memory.core.model.cursor import CursorCodec
from agent_memory.core.model.errors import Conflict
from agent_memory.core.model.models import Caller, Layer, Priority, Scope, SystemType
from agent_memory.core.model.rules import Limits
from agent_memory.storage.audit_buffer import BufferedAuditLog
from agent_memory.storage.sqlite.audit import SqliteAuditLog
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.entries import SqliteEntryRepository
from agent_memory.storage.sqlite.migrations import migrate
from agent_memory.storage.sqlite.pruning import SqlitePruneStore

pytestmark = pytest.mark.anyio

ALICE = Call(Caller("alice", SystemType.SYS1, "red"), "req_test")
def lead(team: str) -> Call:
    return Call(Caller("lead", SystemType.SYS3, team), "req_test")
RETENTION = Retention(max_entries_per_namespace=1000,
                      days={Layer.WORKING: 1, Layer.SESSION: 30, Layer.LONG_TERM: 0, Layer.META: 0})


@dataclass
class Rig:
    """One store's entry repository, prune store and audit log, and raw reads of its tables."""

    name: str
    db: Any
    repo: Any
    prune_store: Any
    audit: BufferedAuditLog

    async def execute(self, sql: str, params: tuple[object, ...]) -> None:
        if self.name == "postgres":
            await self.db.transact(lambda conn: conn.execute(sql.replace("?", "%s"), params))
        else:
            await self.db.transact(lambda conn: conn.execute(sql, params))


@pytest.fixture(params=["sqlite", "postgres"])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Rig]:
    if request.param == "sqlite":
        database = Database(tmp_path / "p.db")
        await database.open()
        await migrate(database)
        audit = SqliteAuditLog(database)
        yield Rig("sqlite", database, SqliteEntryRepository(database), SqlitePruneStore(database), audit)
        await database.close()
        return
    from agent_memory.storage.postgres.audit import PostgresAuditLog
    from agent_memory.storage.postgres.database import PostgresDatabase
    from agent_memory.storage.postgres.entries import PostgresEntryRepository
    from agent_memory.storage.postgres.migrations import migrate as migrate_postgres
    from agent_memory.storage.postgres.pruning import PostgresPruneStore

    pg = PostgresDatabase(request.getfixturevalue("postgres_url"), pool_size=3)
    await pg.open()
    await migrate_postgres(pg)
    yield Rig("postgres", pg, PostgresEntryRepository(pg), PostgresPruneStore(pg), PostgresAuditLog(pg))
    await pg.close()


@pytest.fixture
async def crud(db: Rig):  # noqa: ANN201
    db.audit.start()
    yield CrudService(db.repo, db.audit, CursorCodec(b"k" * 32), Limits(), utc_now, Redactor())
    await db.audit.aclose()


def pruner(db: Rig, days_ahead: float = 0, retention: Retention = RETENTION) -> PruneService:
    return PruneService(db.prune_store, retention, lambda: utc_now() + timedelta(days=days_ahead))


async def rows(db: Rig, sql: str) -> list[tuple]:
    return await db.db.read(lambda conn: conn.execute(sql).fetchall())


async def test_expired_and_past_retention_entries_go_others_stay(db: Rig, crud: CrudService) -> None:
    expiring = await crud.create(ALICE, Scope.AGENT, "alice", NewEntry("soon gone", ttl_seconds=60))
    scratch = await crud.create(ALICE, Scope.AGENT, "alice", NewEntry("scratch note", layer=Layer.WORKING))
    turn = await crud.create(ALICE, Scope.AGENT, "alice", NewEntry("a session turn", layer=Layer.SESSION))
    fact = await crud.create(ALICE, Scope.AGENT, "alice", NewEntry("a lasting fact"))
    assert await pruner(db).prune() == []  # nothing is due yet
    planned = await pruner(db, days_ahead=2).prune(dry_run=True)
    assert {(v.entry_id, v.reason) for v in planned} == {(expiring.id, "expired"), (scratch.id, "retention")}
    assert len(await rows(db, "SELECT id FROM entries")) == 4  # a dry run deletes nothing
    done = await pruner(db, days_ahead=2).prune()
    assert {v.entry_id for v in done} == {expiring.id, scratch.id}
    assert {r[0] for r in await rows(db, "SELECT id FROM entries")} == {turn.id, fact.id}
    audited = await rows(db, "SELECT tool, action, agent_id, entry_id, outcome, details FROM audit "
                             "WHERE tool = 'pruner'")
    assert sorted((r[3], r[5]) for r in audited) == sorted([(expiring.id, '{"reason":"expired"}'),
                                                            (scratch.id, '{"reason":"retention"}')])
    assert {(r[1], r[2], r[4]) for r in audited} == {("prune", "system", "ok")}
    # Their queued creates are dropped. SQLite queues their vectors' deletion (first in line, ahead
    # of the entries still to index); PostgreSQL deleted their vectors with them.
    queued = await rows(db, "SELECT entry_id, op FROM vector_outbox WHERE op = 'delete' OR entry_id IN "
                            f"('{expiring.id}', '{scratch.id}') ORDER BY seq")
    expected = [] if db.name == "postgres" else [(i, "delete") for i in sorted((expiring.id, scratch.id))]
    assert sorted(queued) == expected
    if db.name == "sqlite":
        first = await rows(db, "SELECT entry_id FROM vector_outbox ORDER BY seq LIMIT 2")
        assert {r[0] for r in first} == {expiring.id, scratch.id}
    # Long after: the session turn passes its 30 days; the long-term fact is kept forever.
    assert [v.entry_id for v in await pruner(db, days_ahead=400).prune()] == [turn.id]
    assert [r[0] for r in await rows(db, "SELECT id FROM entries")] == [fact.id]


async def test_over_the_limit_compacted_first_then_lowest_priority_oldest_conflicts_never(
        db: Rig, crud: CrudService) -> None:
    made = {}
    for name, priority in [("low-old", Priority.LOW), ("high-old", Priority.HIGH), ("medium", Priority.MEDIUM),
                           ("low-new", Priority.LOW), ("turn", Priority.HIGH), ("high-new", Priority.HIGH)]:
        made[name] = await crud.create(ALICE, Scope.AGENT, "alice", NewEntry(name, priority=priority))
    await db.execute("UPDATE entries SET compacted = TRUE WHERE id = ?", (made["turn"].id,))
    # A pending conflict on the oldest low-priority entry protects both it and the conflict entry.
    await crud.update(ALICE, Scope.AGENT, "alice", EntryChange(made["low-old"].id, {"content": "v2"}))
    with pytest.raises(Conflict) as conflict:
        await crud.update(ALICE, Scope.AGENT, "alice",
                          EntryChange(made["low-old"].id, {"content": "v3"}, if_match=made["low-old"].etag))
    conflict_id = conflict.value.details["conflict_id"]
    limited = Retention(max_entries_per_namespace=4, days={})
    gone = await pruner(db, retention=limited).prune()  # 7 entries, limit 4: three go
    assert [v.entry_id for v in gone] == [made["turn"].id, made["low-new"].id, made["medium"].id]
    assert {v.reason for v in gone} == {"over_limit"}
    left = {r[0] for r in await rows(db, "SELECT id FROM entries")}
    assert left == {made["low-old"].id, conflict_id, made["high-old"].id, made["high-new"].id}
    # Even far over the limit, the conflict pair stays.
    tight = Retention(max_entries_per_namespace=1, days={})
    await pruner(db, retention=tight).prune()
    assert {made["low-old"].id, conflict_id} <= {r[0] for r in await rows(db, "SELECT id FROM entries")}


async def test_erase_removes_a_namespace_and_with_cascade_those_under_it(db: Rig, crud: CrudService) -> None:
    ids = {}
    for namespace in ("ops", "ops/a", "ops/a/deep", "opsx", "ops_b"):
        team = namespace.split("/")[0]
        ids[namespace] = (await crud.create(lead(team), Scope.TEAM, namespace,
                                            NewEntry(f"in {namespace}", layer=Layer.LONG_TERM))).id
    service = pruner(db)
    only = await service.erase(Scope.TEAM, "ops")
    assert [v.entry_id for v in only] == [ids["ops"]]
    planned = await service.erase(Scope.TEAM, "ops", cascade=True, dry_run=True)
    assert {v.namespace for v in planned} == {"ops/a", "ops/a/deep"}
    await service.erase(Scope.TEAM, "ops", cascade=True)
    assert {r[0] for r in await rows(db, "SELECT namespace FROM entries")} == {"opsx", "ops_b"}
    audited = await rows(db, "SELECT tool, action, entry_id FROM audit WHERE action = 'erase'")
    assert {r[2] for r in audited} == {ids["ops"], ids["ops/a"], ids["ops/a/deep"]}
    assert await service.erase(Scope.AGENT, "nobody") == []


async def test_a_conflict_that_appears_after_planning_saves_its_entry(db: Rig, crud: CrudService) -> None:
    doomed = await crud.create(ALICE, Scope.AGENT, "alice", NewEntry("old and low", priority=Priority.LOW))
    await crud.create(ALICE, Scope.AGENT, "alice", NewEntry("newer"))
    service = pruner(db, retention=Retention(max_entries_per_namespace=1, days={}))
    planned = await service.prune(dry_run=True)
    assert [v.entry_id for v in planned] == [doomed.id]
    current = await crud.update(ALICE, Scope.AGENT, "alice", EntryChange(doomed.id, {"content": "v2"}))
    planned = await service.prune(dry_run=True)  # planned against the current etag
    with pytest.raises(Conflict):
        await crud.update(ALICE, Scope.AGENT, "alice", EntryChange(doomed.id, {"content": "v3"},
                                                                   if_match=doomed.etag))
    assert (await service._delete(planned, Actor(), "prune", check_etag=True)) == []  # noqa: SLF001
    assert current.id in {r[0] for r in await rows(db, "SELECT id FROM entries")}
