"""The record stores the storage contract runs against, built for tests: `sqlite` (a file),
`list` (`MEMORY_BACKEND=list`, in memory) through the composition root, and `postgres` (a real
PostgreSQL with pgvector, tests/postgres.py) from its adapters, wired as the composition root wires
them. tests/storage/conftest.py makes the `store` fixture available to every storage test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_memory.bootstrap import open_app
from agent_memory.core.memories.crud import CrudService
from agent_memory.core.memories.secrets import Redactor
from agent_memory.core.model.clock import utc_now
from agent_memory.core.model.commands import Call
from agent_memory.core.model.cursor import CursorCodec
from agent_memory.core.model.ids import new_entry_id, new_etag
from agent_memory.core.model.models import Caller, Entry, Layer, Priority, Scope, Source, SystemType
from agent_memory.core.model.rules import Limits
from agent_memory.core.ports import BrowseStore, EntryRepository
from agent_memory.storage.audit_buffer import BufferedAuditLog
from tests.conftest import make_settings

ALICE = Call(Caller("alice", SystemType.SYS1, "red"), "req_contract")
ALICE_OF_BLUE = Call(Caller("alice", SystemType.SYS1, "blue"), "req_contract_blue")
CAROL = Call(Caller("carol", SystemType.SYS3, "red"), "req_contract_carol")  # may write team memory
BOB_OF_BLUE = Call(Caller("bob", SystemType.SYS1, "blue"), "req_contract_bob")
AuditRow = tuple[str, str, str | None, str | None, str]  # action, outcome, namespace, entry_id, agent_id


@dataclass(frozen=True)
class Store:
    """One record store's entry ports, and a way to read back its audit rows."""

    name: str
    crud: CrudService
    repo: EntryRepository
    browse: BrowseStore
    audit_rows: Callable[[], Awaitable[list[AuditRow]]]  # flushed first, in write order
    audit: BufferedAuditLog  # the sink for events outside write transactions
    query: Callable[[str], Awaitable[list[tuple]]]  # the rows of portable SQL, no parameters


AUDIT_SQL = "SELECT action, outcome, namespace, entry_id, agent_id FROM audit ORDER BY seq"


@asynccontextmanager
async def postgres_store(url: str) -> AsyncIterator[Store]:
    """The PostgreSQL adapters wired as the composition root wires them."""
    from agent_memory.storage.postgres.audit import PostgresAuditLog
    from agent_memory.storage.postgres.browse import PostgresBrowseStore
    from agent_memory.storage.postgres.database import PostgresDatabase
    from agent_memory.storage.postgres.entries import PostgresEntryRepository
    from agent_memory.storage.postgres.migrations import migrate, read_meta

    db = PostgresDatabase(url, pool_size=4)
    await db.open()
    try:
        assert len(await migrate(db)) > 0 and await migrate(db) == []
        secret = await read_meta(db, "cursor_secret")
        assert secret is not None
        audit = PostgresAuditLog(db)
        audit.start()
        try:
            repo = PostgresEntryRepository(db)
            crud = CrudService(repo=repo, audit=audit, cursors=CursorCodec(bytes.fromhex(secret)),
                               limits=Limits(max_content_chars=32_000), clock=utc_now,
                               redactor=Redactor())

            async def query(sql: str) -> list[tuple]:
                return [tuple(row) for row in await db.read(lambda conn: conn.execute(sql).fetchall())]

            async def audit_rows() -> list[AuditRow]:
                await audit.flush()
                return await query(AUDIT_SQL)  # type: ignore[return-value]

            yield Store("postgres", crud, repo, PostgresBrowseStore(db), audit_rows, audit, query)
        finally:
            await audit.aclose()
    finally:
        await db.close()


@pytest.fixture(params=["sqlite", "list", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "postgres":
        async with postgres_store(request.getfixturevalue("postgres_url")) as opened:
            yield opened
        return
    settings = make_settings(tmp_path / "data", backend=request.param, reflection_interval_seconds=0,
                             prune_interval_seconds=0, compaction_threshold_chars=0)
    async with open_app(settings) as app:
        async def query(sql: str) -> list[tuple]:
            db = app.store.db  # type: ignore[attr-defined]  # the SQLite store's connection
            return [tuple(row) for row in await db.read(lambda conn: conn.execute(sql).fetchall())]

        async def audit_rows() -> list[AuditRow]:
            await app.audit.flush()
            return await query(AUDIT_SQL)  # type: ignore[return-value]

        yield Store(request.param, app.crud, app.store.entries(), app.store.browse_store(), audit_rows, app.audit,
                    query)



def stored(scope: Scope, namespace: str, *, owner: str = "alice", team: str | None = "red",
           content: str = "a fact") -> Entry:
    now = "2026-01-02T03:04:05.000Z"
    return Entry(id=new_entry_id(), scope=scope, namespace=namespace, team=team, owner_agent_id=owner, content=content,
                 tags=(), priority=Priority.MEDIUM, source=Source.MANUAL, confidence=1.0,
                 layer=Layer.LONG_TERM if scope is not Scope.AGENT else Layer.WORKING, created_at=now, updated_at=now,
                 expires_at=None, version=1, etag=new_etag())
