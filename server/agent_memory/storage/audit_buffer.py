"""The store-independent part of the audit sink for events outside write transactions: the
queue, the batching, the retries and the loss accounting. Each record store subclasses it with its
write (storage/sqlite/audit.py, storage/postgres/audit.py)."""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import json
from collections import Counter
from contextlib import suppress

import anyio
import structlog

from agent_memory.core.model.audit import TEXT_FIELDS, storable_event
from agent_memory.core.model.models import AuditEvent
from agent_memory.core.model.text import storable
from agent_memory.storage.failures import failure_detail, failure_reason, storage_reason

MAX_PENDING = 100_000
RETRY_FIRST_SECONDS = 0.5
RETRY_MAX_SECONDS = 5.0
CLOSE_RETRY_SECONDS = (0.0, 0.25, 0.5, 1.0)  # a stop waits at most ~2 s (plus busy_timeouts) for them

log = structlog.get_logger("agent_memory.audit")


def _cut(value: str | None) -> str | None:
    return None if value is None else storable(value[:128])


def audit_params(event: AuditEvent) -> tuple[object, ...]:
    """The row of `event`, with text no store can hold escaped and marked (core/model/audit.py)."""
    event = storable_event(event)
    return (
        event.at, event.request_id, event.agent_id, event.team, event.system_type, event.tool,
        event.action, event.scope, event.namespace, event.entry_id, event.outcome,
        json.dumps(event.details, separators=(",", ":")),
    )


class BufferedAuditLog:
    """Implements `AuditSink` (with a store's `_write`): events are queued and written in batches
    by one background task, so reads never wait on a write transaction. The task gathers events
    for `batch_seconds` after the first one arrives, so a stream of reads costs one audit transaction per window,
    not one per read. A batch the store refuses (full disk, busy database) stays queued (at most
    `max_pending` events, oldest dropped first) and is retried with backoff; the failure is logged
    once, with its reason. `aclose()` retries what is still queued for a moment, then logs how many
    events (by action and outcome, never their content) could not be written. (Writes are audited
    in their own transaction, not here.)"""

    def __init__(self, *, batch_seconds: float = 0.05, max_pending: int = MAX_PENDING) -> None:
        self._batch_seconds = batch_seconds
        self._max_pending = max_pending
        self._pending: list[AuditEvent] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = asyncio.Event()
        self._failing: str | None = None  # the reason of the current run of failed writes
        self._dropped: Counter[tuple[str, str]] = Counter()
        self._apart = False  # the failing flush already put back what it had not written
        self.set_aside = 0  # events the store refused on their own, recorded as marker rows
        self.lost = 0  # events that could not be written at all (only at shutdown, or a refused marker)

    # What a failed batch raises (kept queued and retried): set by each store's sink, with `row_errors`
    # and `_write`.
    store_errors: tuple[type[Exception], ...]
    # What the store raises for an event it cannot take (not for a failing store): such an event is
    # set aside on its own. The text rule is applied first (`storable_event`), so these are rare.
    row_errors: tuple[type[Exception], ...]

    async def _write(self, batch: list[AuditEvent]) -> None:
        """Write `batch` in one transaction."""
        raise NotImplementedError

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="audit-writer", context=contextvars.Context())

    async def record(self, event: AuditEvent) -> None:
        self._pending.append(event)
        if len(self._pending) > self._max_pending:  # only while writes fail: keep the newest
            for old in self._pending[:-self._max_pending]:
                self._dropped[(old.action, old.outcome)] += 1
            del self._pending[:-self._max_pending]
        self._wake.set()

    async def flush(self) -> None:
        """Write every queued event now. An event the store refuses on its own (`row_errors`) is
        set aside (a marker row in its place) and never holds up the others.

        Raises: a `store_errors` error when the store itself fails (the events stay queued)."""
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                try:
                    await self._write(batch)
                except self.row_errors as exc:
                    if storage_reason(exc) is not None:
                        raise
                    await self._write_apart(batch)
            except self.store_errors as exc:
                if batch and not self._apart:
                    self._pending[:0] = batch
                self._apart = False
                reason = failure_reason(exc)
                if reason != self._failing:
                    log.error("audit_write_failed", reason=reason, detail=failure_detail(exc),
                              queued=len(self._pending), exc_info=storage_reason(exc) is None)
                self._failing = reason
                raise
        self._report_dropped()
        if self._failing is not None:
            log.info("audit_write_recovered")
            self._failing = None

    async def _write_apart(self, batch: list[AuditEvent]) -> None:
        """A refused batch, one event at a time: each event the store refuses for what it holds is
        set aside; the others are written.

        Raises: a `store_errors` error when the store fails meanwhile (what is not written yet
        goes back to the queue)."""
        refused: list[tuple[AuditEvent, Exception]] = []
        for index, event in enumerate(batch):
            try:
                await self._write([event])
            except self.store_errors as exc:
                if isinstance(exc, self.row_errors) and storage_reason(exc) is None:
                    refused.append((event, exc))
                    continue
                # Written ones stay written: only the rest goes back, never a second copy.
                self._pending[:0] = [e for e, _ in refused] + batch[index:]
                self._apart = True
                raise
        for event, exc in refused:
            await self._set_aside(event, exc)

    async def _set_aside(self, event: AuditEvent, exc: Exception) -> None:
        """Record in place of `event` a marker row (who, what, outcome, each cut to 128 characters;
        `details.set_aside` = why); when even that is refused, count the event as lost."""
        reason = failure_reason(exc)
        self.set_aside += 1
        log.error("audit_event_set_aside", action=storable(event.action[:64]), outcome=storable(event.outcome[:64]),
                  reason=reason, detail=failure_detail(exc))
        marker = AuditEvent(**{name: _cut(getattr(event, name)) for name in TEXT_FIELDS},
                            details={"set_aside": reason})
        marker = dataclasses.replace(marker, scope=None, namespace=None, entry_id=None)
        try:
            await self._write([marker])
        except self.store_errors:  # the event itself cannot be stored: never retried, so counted
            self._dropped[(marker.action, marker.outcome)] += 1

    def trouble(self) -> str | None:
        """Why audit events are not being written now (for `degraded`), else None."""
        if self._failing is None:
            return None
        return (f"the audit log cannot be written now ({self._failing}); {len(self._pending)} audit events wait "
                "to be retried")

    def snapshot(self) -> dict[str, object]:
        """The sink's state for `stats`: events waiting, the current failure, events set aside and
        lost since the start."""
        return {"pending": len(self._pending), "failing": self._failing, "set_aside": self.set_aside,
                "lost": self.lost}

    async def _run(self) -> None:
        retry = 0.0
        while not self._closing:
            if retry:  # the last write failed: try again later, new events or not
                with suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._closed.wait(), retry)
            else:
                await self._wake.wait()
                with suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._closed.wait(), self._batch_seconds)
            self._wake.clear()
            try:
                await self.flush()
                retry = 0.0
            except self.store_errors:
                retry = min(max(retry * 2, RETRY_FIRST_SECONDS), RETRY_MAX_SECONDS)

    async def aclose(self) -> None:
        """Stop the background writer after its current batch, then write what is left (retried
        for a moment); what still cannot be written is counted in the log, never raised."""
        self._closing = True
        self._closed.set()
        self._wake.set()
        with anyio.CancelScope(shield=True):
            if self._task is not None:
                await self._task
                self._task = None
            for delay in CLOSE_RETRY_SECONDS:
                await asyncio.sleep(delay)
                try:
                    await self.flush()
                    break
                except self.store_errors:
                    continue
            for event in self._pending:
                self._dropped[(event.action, event.outcome)] += 1
            self._pending = []
            self._report_dropped()

    def _report_dropped(self) -> None:
        if self._dropped:
            self.lost += sum(self._dropped.values())
            counts = {f"{action}/{outcome}": n for (action, outcome), n in sorted(self._dropped.items())}
            log.error("audit_events_lost", events=sum(counts.values()), reason=self._failing, by_action_outcome=counts)
            self._dropped.clear()
