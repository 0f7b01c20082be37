"""Maintenance operator work on a store directly (not through MCP): reindex, prune, erase, on the
records the command opened (`bootstrap.open_records`)."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, Protocol

from agent_memory.core.memories.pruning import PruneService
from agent_memory.core.model.models import Scope
from agent_memory.core.ports import OperatorStore, Victim


class OpenRecords(Protocol):
    """What maintenance needs of an opened store (`bootstrap.Records`)."""

    @property
    def backend(self) -> str: ...

    @property
    def operator(self) -> OperatorStore: ...

    def pruner(self) -> PruneService: ...

    def vectors(self) -> Any: ...  # the vector runtime, not started, or None


class OperationFailed(RuntimeError):
    """The command could not do its work; the message says why."""


async def reindex(records: OpenRecords) -> int:
    """Rebuild the vector index from the records (Chroma: reset it; PostgreSQL: drop every stored
    vector), queue every entry again and apply the queue here, with progress on stderr. Returns the
    vector changes applied. On PostgreSQL running servers may apply part of the queue meanwhile
    (any process may), so fewer can be counted here.

    Raises:
        OperationFailed: vectors are switched off, the model is unusable, or a running server
            owns the vector directory.
    """
    runtime = records.vectors()
    if runtime is None:
        raise OperationFailed("vector_backend is none: there is no vector index to rebuild")
    try:
        try:
            await runtime.rebuild()
        except RuntimeError as exc:
            hint = "" if records.backend == "postgres" else " (stop the server that owns it, then retry)"
            raise OperationFailed(f"{exc}{hint}") from None
        total = await runtime.backlog()
        done = 0
        started = time.monotonic()
        while (applied := await runtime.apply_pending()) > 0:
            done += applied
            rate = done / max(time.monotonic() - started, 1e-6)
            print(f"reindex: {done}/{total} ({rate:.0f}/s)", file=sys.stderr, flush=True)
        print(f"reindex: done, {done} vector changes applied", file=sys.stderr)
        return done
    finally:
        await runtime.aclose()


async def prune(records: OpenRecords, *, dry_run: bool) -> list[Victim]:
    """Run the pruner once over every namespace (or only plan it). Vector deletions go through
    the outbox: a running server applies them at once, otherwise the next server start does."""
    return await records.pruner().prune(dry_run=dry_run)


async def erase_plan(records: OpenRecords, scope: Scope, namespace: str, cascade: bool,
                     session_id: str | None = None) -> list[Victim]:
    return await records.pruner().erase(scope, namespace, cascade=cascade, session_id=session_id, dry_run=True)


async def erase(records: OpenRecords, scope: Scope, namespace: str, cascade: bool, session_id: str | None = None,
                wait_seconds: float = 30.0) -> tuple[list[Victim], str]:
    """Privacy erase from the record store, then from the vector index, in time proportional to
    what it erases, however far behind the index is. Each transaction deletes entries, drops what
    was queued for them and queues their vectors' deletion ahead of everything else (on
    PostgreSQL their vectors go with them, and nothing is queued). Then only those deletions are
    applied: here when no server owns the index (no model needed, queued indexing left alone),
    else by the owning server, first thing, waited for up to `wait_seconds`. Interrupted after a
    transaction, what it erased is unfindable at once (retrieval reads only entries that exist)
    and its vectors go first when the next server starts. Returns what was erased and what
    happened to the vectors."""
    erased = await records.pruner().erase(scope, namespace, cascade=cascade, session_id=session_id)
    if not erased:
        return erased, "nothing to erase"
    return erased, await _purge_vectors(records, [v.entry_id for v in erased], wait_seconds)


async def _purge_vectors(records: OpenRecords, ids: list[str], wait_seconds: float) -> str:
    runtime = records.vectors()
    if runtime is None:
        return "no vector index (vector_backend = none)"
    try:
        try:
            if await runtime.apply_deletions() is not None:
                return "vectors removed"
        except Exception as exc:  # the index cannot be opened or changed: the next server repairs it
            raise OperationFailed(f"entries erased from the record store, but the vector index failed "
                                  f"({type(exc).__name__}: {exc}); their vectors' removal stays queued, first "
                                  "in line for the next server") from None
        deadline = time.monotonic() + wait_seconds
        while time.monotonic() < deadline:  # the owning server applies deletions first, within seconds
            if await records.operator.pending_vector_changes(ids) == 0:
                return "vectors removed by the server that owns the index"
            await asyncio.sleep(0.2)
        raise OperationFailed(f"entries erased from the record store, but {runtime.owner_note()} has not removed their "
                              f"vectors within {wait_seconds:.0f} s; their removal is queued first, for when it does")
    finally:
        await runtime.aclose()
