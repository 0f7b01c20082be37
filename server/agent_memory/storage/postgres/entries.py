"""The entry repository on PostgreSQL: implements `EntryRepository` and `WriteTransaction` (the
shared statements are `agent_memory.storage.frame.entries`; here PostgreSQL's row locks,
reflection marks by turn number and vector outbox)."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from agent_memory.core.model.models import Entry
from agent_memory.core.ports import SessionKey
from agent_memory.storage.frame.entries import RepositoryFrame, WriteFrame
from agent_memory.storage.postgres.dialect import POSTGRES

NOW_TEXT = "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"


class PostgresWriteTransaction(WriteFrame):
    """Statements of one transaction, run synchronously on a worker thread's connection."""

    dialect = POSTGRES
    # `get` locks the row until commit: a concurrent writer of this entry waits there and then
    # reads what committed (as SQLite's single writer does), so it sees the winner's etag and
    # version and keeps its change as a conflict entry, instead of failing later in the
    # compare-and-swap on a state it read stale. NO KEY: vector rows referencing the entry are not blocked.
    lock = " FOR NO KEY UPDATE"

    def __init__(self, conn: psycopg.Connection) -> None:
        super().__init__(conn)
        self._deleted: set[str] = set()  # entries this transaction deleted (their vectors went with them)

    def delete(self, entry_id: str, *, expected_etag: str) -> bool:
        if not super().delete(entry_id, expected_etag=expected_etag):
            return False
        self._deleted.add(entry_id)
        return True

    def mark_reflected(self, entry_ids: Sequence[str], at: str) -> None:
        """Move the reflection marks of these session turns' sessions past them (imported turns were
        reflected where they came from; reflecting them again would only re-reinforce facts)."""
        self._conn.execute(
            "INSERT INTO reflection_marks (namespace, team, session_id, last_turn, reflected_at) "
            "SELECT namespace, team, session_id, MAX(turn_seq), %s FROM entries WHERE id = ANY(%s) "
            "AND scope = 'agent' AND turn_seq IS NOT NULL GROUP BY 1, 2, 3 "
            "ON CONFLICT (namespace, team, session_id) DO UPDATE SET "
            "last_turn = GREATEST(reflection_marks.last_turn, excluded.last_turn), "
            "reflected_at = excluded.reflected_at",
            (at, list(entry_ids)))

    def move_reflection_mark(self, key: SessionKey, expected: int, new: int, at: str) -> bool:
        # The row lock (FOR UPDATE, or the insert's unique key) makes check-then-set atomic
        # against another server's reflection of the same session. Marks count turn numbers
        # (`turn_seq`, storage/postgres/turn_numbers.py), which commit in order.
        row = self._conn.execute(
            "SELECT last_turn FROM reflection_marks WHERE namespace = %s AND team = %s AND session_id = %s "
            "FOR UPDATE", (key.home, key.team, key.session_id)).fetchone()
        if (row[0] if row else 0) != expected:
            return False
        if row is None:
            return self._conn.execute(
                "INSERT INTO reflection_marks (namespace, team, session_id, last_turn, reflected_at) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (key.home, key.team, key.session_id, new, at)).rowcount == 1
        self._conn.execute(
            "UPDATE reflection_marks SET last_turn = %s, reflected_at = %s "
            "WHERE namespace = %s AND team = %s AND session_id = %s",
            (new, at, key.home, key.team, key.session_id))
        return True

    def move_kept_mark(self, key: SessionKey, expected: int, new: int) -> bool:
        row = self._conn.execute(
            "SELECT kept_turn FROM reflection_marks WHERE namespace = %s AND team = %s AND session_id = %s "
            "FOR UPDATE", (key.home, key.team, key.session_id)).fetchone()
        if (row[0] if row else 0) != expected:
            return False
        if row is None:
            return self._conn.execute(
                "INSERT INTO reflection_marks (namespace, team, session_id, last_turn, reflected_at, kept_turn) "
                "VALUES (%s, %s, %s, 0, '', %s) ON CONFLICT DO NOTHING",
                (key.home, key.team, key.session_id, new)).rowcount == 1
        self._conn.execute("UPDATE reflection_marks SET kept_turn = %s "
                           "WHERE namespace = %s AND team = %s AND session_id = %s",
                           (new, key.home, key.team, key.session_id))
        return True

    def enqueue_vector(self, entry: Entry, op: str) -> None:
        """The vector of an entry deleted in this transaction is already gone (`entry_vectors`
        rows go with their entry), so its deletion is not queued, and what was queued for it is
        dropped (save rows a server is applying right now: it finds the entry gone)."""
        if op == "delete" and entry.id in self._deleted:
            self._conn.execute("DELETE FROM vector_outbox WHERE seq IN (SELECT seq FROM vector_outbox "
                               "WHERE entry_id = %s FOR UPDATE SKIP LOCKED)", (entry.id,))
            return
        self._conn.execute(
            "INSERT INTO vector_outbox (entry_id, op, scope, namespace, enqueued_at) "
            f"VALUES (%s, %s, %s, %s, {NOW_TEXT})",
            (entry.id, op, entry.scope.value, entry.namespace),
        )
        self.enqueued += 1


class PostgresEntryRepository(RepositoryFrame):
    dialect = POSTGRES
    transaction = PostgresWriteTransaction

