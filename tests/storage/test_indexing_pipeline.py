"""The SQLite indexer's pipeline (storage/chroma/pipeline.py) on a real SQLite file: a backlog is
applied in growing batches, each batch's rows forgotten only once written, and a deletion queued
while a backlog is being applied is applied next, not after the backlog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_memory.storage.chroma import outbox, pipeline
from agent_memory.storage.embedding.indexing_clock import IndexingClock
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.migrations import migrate

pytestmark = pytest.mark.anyio

BACKLOG = 1000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def queue(conn: Any, ids: list[str], *, front: bool = False) -> None:
    for entry_id in ids:
        conn.execute("INSERT INTO vector_outbox (seq, entry_id, op, scope, namespace, enqueued_at) "
                     "SELECT CASE WHEN ? THEN MIN(COALESCE(MIN(seq), 1), 1) - 1 END, ?, ?, 'team', 'ops', 'now' "
                     "FROM vector_outbox", (front, entry_id, "delete" if front else "upsert"))


async def test_a_deletion_queued_during_a_backlog_is_applied_next(tmp_path: Path) -> None:
    db = Database(tmp_path / "memory.db")
    await db.open()
    try:
        await migrate(db)
        await db.transact(lambda conn: queue(conn, [f"note-{n}" for n in range(BACKLOG)]))
        written: list[list[str]] = []
        queued: list[int] = []

        async def embed(batch: outbox.Batch) -> Any:
            if not written:  # while the first batch is applied, an erase queues a deletion
                await db.transact(lambda conn: queue(conn, ["erased"], front=True))
            return None  # no entry exists: nothing to embed

        async def write(batch: outbox.Batch, vectors: Any) -> outbox.Applied:
            written.append(list(batch.latest))
            queued.append(await outbox.backlog(db))  # this batch's rows are still queued while it is written
            return outbox.Applied([], list(batch.latest))

        consumed = 0
        while (applied := await pipeline.apply_run(db, embed, write, IndexingClock())) > 0:
            consumed += applied
        assert consumed == BACKLOG + 1
        assert await outbox.backlog(db) == 0
        assert len(written[0]) == pipeline.FIRST_BATCH
        assert written[1][0] == "erased"  # next, from the front of the outbox
        assert max(len(ids) for ids in written) == pipeline.BULK_BATCH  # a backlog goes in bigger batches
        assert sorted(i for ids in written for i in ids) == sorted([*(f"note-{n}" for n in range(BACKLOG)), "erased"])
        assert queued[0] == BACKLOG + 1  # nothing was forgotten before it was written
    finally:
        await db.close()
