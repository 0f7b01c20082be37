"""The append-only audit table on PostgreSQL, and its buffered sink for events outside write
transactions (the batching, retries and loss accounting are storage/audit_buffer.py's)."""

from __future__ import annotations

import psycopg
import psycopg.errors

from agent_memory.core.model.models import AuditEvent
from agent_memory.storage.audit_buffer import MAX_PENDING, BufferedAuditLog, audit_params
from agent_memory.storage.postgres.database import PostgresDatabase

INSERT_AUDIT = (
    "INSERT INTO audit (at, request_id, agent_id, team, system_type, tool, action, scope, namespace, "
    "entry_id, outcome, details) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)

__all__ = ["INSERT_AUDIT", "PostgresAuditLog", "audit_params"]


class PostgresAuditLog(BufferedAuditLog):
    """Implements `AuditSink` on PostgreSQL: events queued, written in batches by one background
    task (one transaction per batch), a refused batch kept and retried (see `BufferedAuditLog`)."""

    store_errors = (psycopg.Error, ValueError, TypeError, OverflowError)
    row_errors = (psycopg.errors.DataError, psycopg.errors.IntegrityError, psycopg.errors.ProgramLimitExceeded,
                  ValueError, TypeError, OverflowError)

    def __init__(self, db: PostgresDatabase, *, batch_seconds: float = 0.05, max_pending: int = MAX_PENDING) -> None:
        super().__init__(batch_seconds=batch_seconds, max_pending=max_pending)
        self._db = db

    async def _write(self, batch: list[AuditEvent]) -> None:
        rows = [audit_params(e) for e in batch]

        def write(conn: psycopg.Connection) -> None:
            with conn.cursor() as cursor:
                cursor.executemany(INSERT_AUDIT, rows)

        await self._db.transact(write)
