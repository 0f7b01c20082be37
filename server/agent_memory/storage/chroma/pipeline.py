"""Applying a backlog of the SQLite outbox to Chroma as a pipeline: batch N+1 is read and embedded
(on the embedding thread; ONNX Runtime releases the GIL) while batch N is written to the index
(on the indexing thread) and its outbox rows forgotten.

Batches start at `FIRST_BATCH` rows (a write's few entries are searchable at once) and grow to
`BULK_BATCH` while the outbox stays full: a bigger batch sorts more texts by length before
they are cut into the model's sub-batches, so they are padded less (on LoCoMo-like texts 16% of
the tokens embedded are padding at 64 rows, 5% at 256) and there are fewer index writes and
transactions per entry.

The crash-safety rule is unchanged: a batch's outbox rows are deleted (in one transaction with
SQLite's copies of the vectors) only once its vectors are in the index. A batch read ahead only
holds rows queued after the one being written (`after`); a deletion queued meanwhile goes to the
front of the outbox, so the run stops reading ahead when it sees one and the next run (from the
front) applies it at once, after every upsert read before it: an erase never waits behind a backlog.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any

from agent_memory.storage.chroma import outbox
from agent_memory.storage.embedding.indexing_clock import IndexingClock
from agent_memory.storage.sqlite.database import Database

FIRST_BATCH = 64
BULK_BATCH = 256

Embed = Callable[[outbox.Batch], Awaitable[Any]]  # the batch's live entries' vectors (None: none live)
Write = Callable[[outbox.Batch, Any], Awaitable[outbox.Applied]]


async def apply_run(db: Database, embed: Embed, write: Write, clock: IndexingClock) -> int:
    """Apply the outbox until a read finds nothing after the last batch; returns the rows consumed.
    Raises whatever reading, embedding, writing or forgetting raises (what was forgotten stays
    applied; the rest stays queued)."""
    size = FIRST_BATCH
    with clock.step("read"):
        batch = await outbox.next_batch(db, size)
    if batch is None:
        return 0
    clock.batch_started()
    embedding = _start(embed, batch)
    consumed = 0
    try:
        while batch is not None:
            vectors = await embedding
            size = BULK_BATCH if len(batch.seqs) >= size else FIRST_BATCH
            with clock.step("read"):
                # A deletion queued meanwhile (a privacy erase) must not wait behind the backlog:
                # the run ends after this batch and the next starts from the front, with it.
                ahead = None if await outbox.queued_before(db, min(batch.seqs)) \
                    else await outbox.next_batch(db, size, after=max(batch.seqs))
            embedding = _start(embed, ahead) if ahead is not None else None
            applied = await write(batch, vectors)
            with clock.step("forget"):
                await outbox.forget(db, batch.seqs, applied)
            consumed += len(batch.seqs)
            clock.batch_done(len(batch.seqs), len(batch.live))
            batch = ahead
    finally:
        if embedding is not None:  # a failure: the batch read ahead stays queued
            embedding.add_done_callback(_retrieved)
    return consumed


def _start(embed: Embed, batch: outbox.Batch) -> asyncio.Future[Any]:
    return asyncio.ensure_future(embed(batch))


def _retrieved(future: asyncio.Future[Any]) -> None:
    with suppress(BaseException):
        future.result()
