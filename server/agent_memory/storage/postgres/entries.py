"""The entry repository: implements `EntryRepository` and `WriteTransaction` on PostgreSQL.

A port of `agent_memory.storage.sqlite.entries`, statement for statement: compare-and-swap on the
etag (and version) in the UPDATE/DELETE itself, so of two writers holding the same etag exactly one
changes a row, under PostgreSQL's READ COMMITTED as under SQLite's single writer (the second
UPDATE waits for the first's row lock, then re-checks its WHERE against the committed row).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import psycopg

from agent_memory.core.cursor import Position
from agent_memory.core.models import AuditEvent, Entry, ListQuery
from agent_memory.core.ports import SessionKey
from agent_memory.core.visibility import Area
from agent_memory.storage.postgres.audit import INSERT_AUDIT, audit_params
from agent_memory.storage.postgres.database import PostgresDatabase
from agent_memory.storage.postgres.rows import (
    INSERT_ENTRY,
    KEY_HOLDER,
    SELECT_ENTRY,
    UPDATE_ENTRY,
    UPSERT_KEYED,
    entry_params,
    row_to_entry,
    update_params,
)
from agent_memory.storage.postgres.visibility import area_clause

T = TypeVar("T")

NOW_TEXT = "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"


class PostgresWriteTransaction:
    """Statements of one transaction, run synchronously on a worker thread's connection."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self._conn = conn
        self.enqueued = 0
        self.inserted_into: set[tuple[str, str]] = set()
        self._deleted: set[str] = set()  # entries this transaction deleted (their vectors went with them)

    def get(self, entry_id: str) -> Entry | None:
        # Locked until commit: a concurrent writer of this entry waits here and then reads what
        # committed (as SQLite's single writer does), so it sees the winner's etag and version and
        # keeps its change as a conflict entry, instead of failing later in the compare-and-swap
        # on a state it read stale. NO KEY: vector rows referencing the entry are not blocked.
        row = self._conn.execute(f"{SELECT_ENTRY} WHERE id = %s FOR NO KEY UPDATE", (entry_id,)).fetchone()
        return row_to_entry(row) if row is not None else None

    def insert(self, entry: Entry) -> None:
        self._conn.execute(INSERT_ENTRY, entry_params(entry))
        self.inserted_into.add((entry.scope.value, entry.namespace))

    def upsert_keyed(self, entry: Entry) -> Entry | None:
        row = self._conn.execute(UPSERT_KEYED, entry_params(entry)).fetchone()
        if row is None:
            return None
        stored = row_to_entry(row)
        if stored.id == entry.id:
            self.inserted_into.add((entry.scope.value, entry.namespace))
        return stored

    def key_holder(self, entry: Entry) -> str | None:
        row = self._conn.execute(KEY_HOLDER, (entry.scope.value, entry.namespace, entry.team or "",
                                              entry.key)).fetchone()
        return str(row[0]) if row is not None else None

    def replace(self, entry: Entry, *, expected_etag: str) -> bool:
        return self._conn.execute(UPDATE_ENTRY, update_params(entry, expected_etag)).rowcount == 1

    def delete(self, entry_id: str, *, expected_etag: str) -> bool:
        cursor = self._conn.execute("DELETE FROM entries WHERE id = %s AND etag = %s", (entry_id, expected_etag))
        if cursor.rowcount == 1:
            self._deleted.add(entry_id)
            return True
        return False

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

    def has_pending_conflict(self, entry_id: str) -> bool:
        return self._conn.execute("SELECT 1 FROM entries WHERE conflict_of = %s AND conflict LIMIT 1",
                                  (entry_id,)).fetchone() is not None

    def audit(self, event: AuditEvent) -> None:
        self._conn.execute(INSERT_AUDIT, audit_params(event))

    def mark_compacted(self, entry_ids: Sequence[str]) -> int:
        return self._conn.execute("UPDATE entries SET compacted = TRUE WHERE id = ANY(%s) AND NOT compacted",
                                  (list(entry_ids),)).rowcount

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


class PostgresEntryRepository:
    def __init__(self, db: PostgresDatabase, *, on_vector_change: Callable[[], None] | None = None,
                 on_insert: Callable[[set[tuple[str, str]]], None] | None = None) -> None:
        """Args:
            on_vector_change: called after a commit that queued vector changes (wakes the applier).
            on_insert: called after a commit that inserted entries, with their (scope, namespace)s.
        """
        self._db = db
        self._on_vector_change = on_vector_change
        self._on_insert = on_insert

    async def transact(self, work: Callable[[PostgresWriteTransaction], T]) -> T:
        done: list[PostgresWriteTransaction] = []

        def run(conn: psycopg.Connection) -> T:
            tx = PostgresWriteTransaction(conn)
            result = work(tx)
            done.append(tx)
            return result

        result = await self._db.transact(run)
        tx = done[-1]
        if tx.enqueued and self._on_vector_change is not None:
            self._on_vector_change()
        if tx.inserted_into and self._on_insert is not None:
            self._on_insert(tx.inserted_into)
        return result

    async def get_many(self, entry_ids: Sequence[str]) -> dict[str, Entry]:
        if not entry_ids:
            return {}
        rows = await self._db.read(
            lambda conn: conn.execute(f"{SELECT_ENTRY} WHERE id = ANY(%s)", (list(entry_ids),)).fetchall())
        return {entry.id: entry for entry in map(row_to_entry, rows)}

    async def list_page(self, query: ListQuery, after: Position | None, limit: int) -> list[Entry]:
        sql, params = build_list_sql(query, after, limit)
        rows = await self._db.read(lambda conn: conn.execute(sql, params).fetchall())
        return [row_to_entry(row) for row in rows]

    async def superseded_facts(self, entry_ids: Sequence[str]) -> list[Entry]:
        """`LineageStore`: the entries whose `superseded_by` is one of `entry_ids` (index 013)."""
        if not entry_ids:
            return []
        rows = await self._db.read(lambda conn: conn.execute(
            f"{SELECT_ENTRY} WHERE superseded_by = ANY(%s) ORDER BY created_at, id", (list(entry_ids),)).fetchall())
        return [row_to_entry(row) for row in rows]


def build_list_sql(query: ListQuery, after: Position | None, limit: int, *, areas: Sequence[Area] | None = None,
                   superseded: bool | None = None) -> tuple[str, tuple[object, ...]]:
    """Keyset-paginated SELECT, newest first, using the (scope, namespace, created_at, id) index.
    `areas` (the memory console's browse) replaces `query.area`; `superseded` keeps only superseded
    (True) or only current (False) entries."""
    f = query.filters
    area, params = area_clause([query.area] if areas is None else areas)
    where = [area]
    if superseded is not None:
        where.append(f"superseded_by IS {'NOT ' if superseded else ''}NULL")
    if not f.include_expired:
        where.append("(expires_at IS NULL OR expires_at > %s)")
        params.append(query.now)
    for column, value in (
        ("layer", f.layer.value if f.layer else None),
        ("source", f.source.value if f.source else None),
        ("priority", f.priority.value if f.priority else None),
        ("owner_agent_id", f.owner_agent_id),
        ("session_id", f.session_id),
        ("key", f.key),
        ("domain", f.domain.value if f.domain else None),
    ):
        if value is not None:
            where.append(f"{column} = %s")
            params.append(value)
    if f.conflict is not None:
        where.append("conflict = %s")
        params.append(f.conflict)
    if f.created_after:
        where.append("created_at > %s")
        params.append(f.created_after)
    if f.created_before:
        where.append("created_at < %s")
        params.append(f.created_before)
    if f.tags:
        where.append("tags @> %s::text[]")  # every one of the tags
        params.append(list(f.tags))
    if after is not None:
        where.append("(created_at < %s OR (created_at = %s AND id < %s))")
        params.extend([after.created_at, after.created_at, after.entry_id])
    sql = f"{SELECT_ENTRY} WHERE {' AND '.join(where)} ORDER BY created_at DESC, id DESC LIMIT %s"
    params.append(limit)
    return sql, tuple(params)
