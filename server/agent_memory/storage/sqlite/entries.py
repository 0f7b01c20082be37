"""The entry repository: implements `EntryRepository` and `WriteTransaction` on SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import TypeVar

from agent_memory.core.cursor import Position
from agent_memory.core.models import AuditEvent, Entry, ListQuery
from agent_memory.core.ports import SessionKey
from agent_memory.core.visibility import Area
from agent_memory.storage.sqlite.audit import INSERT_AUDIT, audit_params
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.rows import (
    INSERT_ENTRY,
    KEY_HOLDER,
    SELECT_ENTRY,
    UPDATE_ENTRY,
    UPSERT_KEYED,
    entry_params,
    row_to_entry,
    update_params,
)
from agent_memory.storage.sqlite.visibility import area_clause

T = TypeVar("T")


class SqliteWriteTransaction:
    """Statements of one transaction, run synchronously on the writer's thread."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.enqueued = 0
        self.inserted_into: set[tuple[str, str]] = set()
        self._gone: list[str] = []  # entries whose vector this transaction queued for deletion
        self._queued_before: int | None = None  # the last outbox row queued before the first of them

    def get(self, entry_id: str) -> Entry | None:
        row = self._conn.execute(f"{SELECT_ENTRY} WHERE id = ?", (entry_id,)).fetchone()
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
        cursor = self._conn.execute("DELETE FROM entries WHERE id = ? AND etag = ?", (entry_id, expected_etag))
        return cursor.rowcount == 1

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

    def has_pending_conflict(self, entry_id: str) -> bool:
        return self._conn.execute("SELECT 1 FROM entries WHERE conflict_of = ? AND conflict = 1 LIMIT 1",
                                  (entry_id,)).fetchone() is not None

    def audit(self, event: AuditEvent) -> None:
        self._conn.execute(INSERT_AUDIT, audit_params(event))

    def mark_compacted(self, entry_ids: Sequence[str]) -> int:
        marked = 0
        for start in range(0, len(entry_ids), 500):
            chunk = list(entry_ids[start:start + 500])
            marks = ", ".join("?" for _ in chunk)
            marked += self._conn.execute(
                f"UPDATE entries SET compacted = 1 WHERE id IN ({marks}) AND compacted = 0", chunk).rowcount
        return marked

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


class SqliteEntryRepository:
    def __init__(self, db: Database, *, on_vector_change: Callable[[], None] | None = None,
                 on_insert: Callable[[set[tuple[str, str]]], None] | None = None) -> None:
        """Args:
            on_vector_change: called after a commit that queued vector changes (wakes the applier).
            on_insert: called after a commit that inserted entries, with their (scope, namespace)s
                (lets the pruner look at namespaces that grew).
        """
        self._db = db
        self._on_vector_change = on_vector_change
        self._on_insert = on_insert

    async def transact(self, work: Callable[[SqliteWriteTransaction], T]) -> T:
        done: list[SqliteWriteTransaction] = []

        def run(conn: sqlite3.Connection) -> T:
            tx = SqliteWriteTransaction(conn)
            result = work(tx)
            tx.finish()
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
        marks = ", ".join("?" for _ in entry_ids)
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(f"{SELECT_ENTRY} WHERE id IN ({marks})", tuple(entry_ids))
        return {entry.id: entry for entry in map(row_to_entry, rows)}

    async def list_page(self, query: ListQuery, after: Position | None, limit: int) -> list[Entry]:
        sql, params = build_list_sql(query, after, limit)
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(sql, params)
        return [row_to_entry(row) for row in rows]

    async def superseded_facts(self, entry_ids: Sequence[str]) -> list[Entry]:
        """`LineageStore`: the entries whose `superseded_by` is one of `entry_ids` (index 016)."""
        if not entry_ids:
            return []
        marks = ", ".join("?" for _ in entry_ids)
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(
                f"{SELECT_ENTRY} WHERE superseded_by IN ({marks}) ORDER BY created_at, id", tuple(entry_ids))
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
        where.append("(expires_at IS NULL OR expires_at > ?)")
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
            where.append(f"{column} = ?")
            params.append(value)
    if f.conflict is not None:
        where.append("conflict = ?")
        params.append(int(f.conflict))
    if f.created_after:
        where.append("created_at > ?")
        params.append(f.created_after)
    if f.created_before:
        where.append("created_at < ?")
        params.append(f.created_before)
    if f.tags:
        marks = ", ".join("?" for _ in f.tags)
        where.append(f"(SELECT COUNT(DISTINCT value) FROM json_each(entries.tags) WHERE value IN ({marks})) = ?")
        params.extend([*f.tags, len(f.tags)])
    if after is not None:
        where.append("(created_at < ? OR (created_at = ? AND id < ?))")
        params.extend([after.created_at, after.created_at, after.entry_id])
    sql = f"{SELECT_ENTRY} WHERE {' AND '.join(where)} ORDER BY created_at DESC, id DESC LIMIT ?"
    params.append(limit)
    return sql, tuple(params)
