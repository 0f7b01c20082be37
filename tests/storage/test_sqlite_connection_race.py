"""One SQLite `Database` shared by many concurrent callers: the buffered audit writer, audited write
transactions and reads, all at once, as a server with many HTTP clients runs them."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from agent_memory.core.model.models import AuditEvent
from agent_memory.storage.sqlite.audit import SqliteAuditLog
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.entries import SqliteEntryRepository
from agent_memory.storage.sqlite.migrations import migrate

pytestmark = pytest.mark.anyio

CLIENTS = 16
ROUNDS = 600


def event(action: str, n: int) -> AuditEvent:
    return AuditEvent(at="2025-01-01T00:00:00.000Z", request_id=f"req_{n}", agent_id="alice", team="red",
                      system_type="sys1", tool="memory_crud", action=action, scope="agent", namespace="alice",
                      entry_id=None, outcome="ok")


async def test_audit_batches_writes_and_reads_on_one_database_never_misuse_the_connection(tmp_path: Path) -> None:
    # Before the fix, the audit writer's batch statement came back to the event loop as a live
    # cursor; freeing it there reset a statement the writer thread was running for another
    # transaction: "bad parameter or other API misuse" (InterfaceError) in a write or a batch.
    db = Database(tmp_path / "race.db")
    await db.open()
    await migrate(db)
    audit = SqliteAuditLog(db, batch_seconds=0)
    audit.start()
    repo = SqliteEntryRepository(db)
    failures: list[str] = []

    async def client(n: int) -> None:
        for i in range(ROUNDS):
            try:
                await audit.record(event("read", n))  # reads are audited through the buffered sink,
                await repo.transact(lambda tx: tx.audit(event("create", n)))  # writes in their transaction
                if i % 10 == 0:
                    async with db.reading() as conn:
                        await conn.execute_fetchall("SELECT MAX(seq) FROM audit")
            except sqlite3.Error as exc:
                failures.append(repr(exc))

    try:
        with capture_logs() as logged:
            await asyncio.wait_for(asyncio.gather(*(client(n) for n in range(CLIENTS))), 120)
            await audit.aclose()
        async with db.reading() as conn:
            rows = await conn.execute_fetchall("SELECT action, COUNT(*) FROM audit GROUP BY action")
    finally:
        await db.close()
    assert failures == []
    assert [e for e in logged if e["event"] in ("audit_write_failed", "audit_events_lost")] == []
    assert dict(rows) == {"create": CLIENTS * ROUNDS, "read": CLIENTS * ROUNDS}
