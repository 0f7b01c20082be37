"""The entry repository on SQLite: implements `EntryRepository` and `WriteTransaction` (the
shared statements are `agent_memory.storage.frame.entries`; here SQLite's reflection marks and
vector outbox)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from agent_memory.core.model.models import Entry
from agent_memory.core.ports import SessionKey
from agent_memory.storage.frame.entries import RepositoryFrame, WriteFrame
from agent_memory.storage.sqlite.dialect import SQLITE


class SqliteWriteTransaction(WriteFrame):
    """Statements of one transaction, run synchronously on the writer's thread."""

    dialect = SQLITE

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self._gone: list[str] = []  # entries whose vector this transaction queued for deletion
        self._queued_before: int | None = None  # the last outbox row queued before the first of them

    def mark_reflected(self, entry_ids: Sequence[str], at: str) -> None:
        """Move the reflection marks of these session turns' sessions past them (imported turns were
        reflected where they came from; reflecting them again would only re-reinforce facts)."""
        marks = ", ".join("?" for _ in entry_ids)
        self._conn.execute(
            "INSERT INTO reflection_marks (namespace, team, session_id, last_rowid, reflected_at) "
            f"SELECT namespace, team, session_id, MAX(rowid), ? FROM entries WHERE id IN ({marks}) "
            "AND scope = 'agent' AND session_id IS NOT NULL AND team IS NOT NULL GROUP BY 1, 2, 3 "
            "ON CONFLICT (namespace, team, session_id) DO UPDATE SET "
            "last_rowid = MAX(last_rowid, excluded.last_rowid), reflected_at = excluded.reflected_at",
            [at, *entry_ids])

    def move_reflection_mark(self, key: SessionKey, expected: int, new: int, at: str) -> bool:
        row = self._conn.execute(
            "SELECT last_rowid FROM reflection_marks WHERE namespace = ? AND team = ? AND session_id = ?",
            (key.home, key.team, key.session_id)).fetchone()
        if (row[0] if row else 0) != expected:
            return False
        self._conn.execute(
            "INSERT INTO reflection_marks (namespace, team, session_id, last_rowid, reflected_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (namespace, team, session_id) DO UPDATE SET "
            "last_rowid = excluded.last_rowid, reflected_at = excluded.reflected_at",
            (key.home, key.team, key.session_id, new, at))
        return True

    def move_kept_mark(self, key: SessionKey, expected: int, new: int) -> bool:
        row = self._conn.execute(
            "SELECT kept_rowid FROM reflection_marks WHERE namespace = ? AND team = ? AND session_id = ?",
            (key.home, key.team, key.session_id)).fetchone()
        if (row[0] if row else 0) != expected:
            return False
        self._conn.execute(
            "INSERT INTO reflection_marks (namespace, team, session_id, last_rowid, reflected_at, kept_rowid) "
            "VALUES (?, ?, ?, 0, '', ?) ON CONFLICT (namespace, team, session_id) DO UPDATE SET "
            "kept_rowid = excluded.kept_rowid", (key.home, key.team, key.session_id, new))
        return True

    def enqueue_vector(self, entry: Entry, op: str) -> None:
        """A deletion goes to the front of the queue (a sequence number below every queued row):
        it needs no embedding, and a privacy erase must not wait behind a backlog of entries to
        index. What was queued for the entry before is dropped when the transaction ends (`finish`)."""
        if op == "delete":
            if self._queued_before is None:
                self._queued_before = self._conn.execute(
                    "SELECT COALESCE(MAX(seq), 0) FROM vector_outbox").fetchone()[0]
            self._gone.append(entry.id)
            self._conn.execute(
                "INSERT INTO vector_outbox (seq, entry_id, op, scope, namespace, enqueued_at) "
                "SELECT MIN(COALESCE(MIN(seq), 1), 1) - 1, ?, 'delete', ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                "FROM vector_outbox", (entry.id, entry.scope.value, entry.namespace))
        else:
            self._conn.execute(
                "INSERT INTO vector_outbox (entry_id, op, scope, namespace, enqueued_at) "
                "VALUES (?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                (entry.id, op, entry.scope.value, entry.namespace),
            )
        self.enqueued += 1

    def finish(self) -> None:
        """Before the commit: drop the changes queued (before this transaction) for the entries it
        queued deletions for, in one pass over the outbox per 500 entries."""
        for start in range(0, len(self._gone), 500):
            chunk = self._gone[start:start + 500]
            marks = ", ".join("?" for _ in chunk)
            self._conn.execute(f"DELETE FROM vector_outbox WHERE seq > 0 AND seq <= ? AND entry_id IN ({marks})",
                               [self._queued_before, *chunk])


class SqliteEntryRepository(RepositoryFrame):
    dialect = SQLITE
    transaction = SqliteWriteTransaction

