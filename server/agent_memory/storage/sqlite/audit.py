"""The append-only audit table on SQLite, and its buffered sink for events outside write
transactions (the batching, retries and loss accounting are storage/audit_buffer.py's)."""

from __future__ import annotations

import sqlite3

from agent_memory.core.model.models import AuditEvent
from agent_memory.storage.audit_buffer import MAX_PENDING, BufferedAuditLog, audit_params
from agent_memory.storage.sqlite.database import Database

INSERT_AUDIT = (
    "INSERT INTO audit (at, request_id, agent_id, team, system_type, tool, action, scope, namespace, "
    "entry_id, outcome, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

__all__ = ["INSERT_AUDIT", "SqliteAuditLog", "audit_params"]


class SqliteAuditLog(BufferedAuditLog):
    """Implements `AuditSink` on SQLite: events queued, written in batches by one background task
    (one transaction per batch), a refused batch kept and retried (see `BufferedAuditLog`)."""

    store_errors = (sqlite3.Error, ValueError, TypeError, OverflowError)
    row_errors = (sqlite3.DataError, sqlite3.IntegrityError, ValueError, TypeError, OverflowError)

    def __init__(self, db: Database, *, batch_seconds: float = 0.05, max_pending: int = MAX_PENDING) -> None:
        super().__init__(batch_seconds=batch_seconds, max_pending=max_pending)
        self._db = db

    async def _write(self, batch: list[AuditEvent]) -> None:
        rows = [audit_params(e) for e in batch]
        await self._db.transact(lambda conn: conn.executemany(INSERT_AUDIT, rows))
