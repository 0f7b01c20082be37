"""The append-only audit table, and a sink that batches events outside write transactions."""

from __future__ import annotations

import asyncio
import contextvars
import json
import sqlite3
from contextlib import suppress

import anyio
import structlog

from agent_memory.core.models import AuditEvent
from agent_memory.storage.sqlite.database import Database

INSERT_AUDIT = (
    "INSERT INTO audit (at, request_id, agent_id, team, system_type, tool, action, scope, namespace, "
    "entry_id, outcome, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

log = structlog.get_logger("agent_memory.audit")


def audit_params(event: AuditEvent) -> tuple[object, ...]:
    return (
        event.at, event.request_id, event.agent_id, event.team, event.system_type, event.tool,
        event.action, event.scope, event.namespace, event.entry_id, event.outcome,
        json.dumps(event.details, separators=(",", ":")),
    )


class BufferedAuditLog:
    """Implements `AuditSink`: events are queued and written in batches by one background task,
    so reads never wait on a write transaction. The task gathers events for `batch_seconds`
    after the first one arrives, so a stream of reads costs one audit transaction per window,
    not one per read. `aclose()` writes whatever is still queued. (Writes are audited in their
    own transaction, not here.)"""

    def __init__(self, db: Database, *, batch_seconds: float = 0.05) -> None:
        self._db = db
        self._batch_seconds = batch_seconds
        self._pending: list[AuditEvent] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="audit-writer", context=contextvars.Context())

    async def record(self, event: AuditEvent) -> None:
        self._pending.append(event)
        self._wake.set()

    async def flush(self) -> None:
        """Write every queued event now."""
        while self._pending:
            batch, self._pending = self._pending, []
            rows = [audit_params(e) for e in batch]
            try:
                await self._db.transact(lambda conn, rows=rows: conn.executemany(INSERT_AUDIT, rows))
            except sqlite3.Error:
                log.exception("audit_write_failed", events=len(batch))
                self._pending[:0] = batch
                raise

    async def _run(self) -> None:
        while not self._closing:
            await self._wake.wait()
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._closed.wait(), self._batch_seconds)
            self._wake.clear()
            with suppress(sqlite3.Error):
                await self.flush()

    async def aclose(self) -> None:
        """Stop the background writer after its current batch, then write what is left."""
        self._closing = True
        self._closed.set()
        self._wake.set()
        with anyio.CancelScope(shield=True):
            if self._task is not None:
                await self._task
                self._task = None
            await self.flush()
