"""The entry repository frame (implements `EntryRepository` and most of `WriteTransaction`) for
either store: compare-and-swap on the etag (and version) in the UPDATE/DELETE itself, so of two
writers holding the same etag exactly one changes a row (under SQLite's single writer as under
PostgreSQL's READ COMMITTED, where the second UPDATE waits for the first's row lock, then re-checks
its WHERE against the committed row). A store adds its reflection marks and its vector outbox."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from agent_memory.core.access.visibility import Area
from agent_memory.core.model.cursor import Position
from agent_memory.core.model.models import AuditEvent, Entry
from agent_memory.core.ports import ListQuery
from agent_memory.storage.entry_rows import upserted_values
from agent_memory.storage.frame.dialect import Dialect
from agent_memory.storage.frame.visibility import area_clause

T = TypeVar("T")


class WriteFrame:
    """Statements of one transaction, run synchronously on its connection's thread."""

    dialect: ClassVar[Dialect]
    lock: ClassVar[str] = ""  # appended to `get`'s SELECT

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self.enqueued = 0
        self.inserted_into: set[tuple[str, str]] = set()

    def get(self, entry_id: str) -> Entry | None:
        d = self.dialect
        row = self._conn.execute(f"{d.select_entry} WHERE id = {d.mark}{self.lock}", (entry_id,)).fetchone()
        return d.row_to_entry(row) if row is not None else None

    def insert(self, entry: Entry) -> None:
        self._conn.execute(self.dialect.insert_entry, self.dialect.entry_params(entry))
        self.inserted_into.add((entry.scope.value, entry.namespace))

    def upsert_keyed(self, entry: Entry) -> Entry | None:
        d, params = self.dialect, self.dialect.entry_params(entry)
        if not entry.read_agents:  # first the read-listed entry the key names for its writer, if any
            writer = entry.owner_agent_id
            _, listed = d.reader_clause("", writer)
            row = self._conn.execute(d.listed_key_update, (
                *upserted_values(params), entry.scope.value, entry.namespace, entry.team or "", entry.key,
                *listed, writer, *listed, writer)).fetchone()
            if row is not None:
                return d.row_to_entry(row)
        row = self._conn.execute(d.upsert_keyed, params).fetchone()
        if row is None:
            return None
        stored = d.row_to_entry(row)
        if stored.id == entry.id:
            self.inserted_into.add((entry.scope.value, entry.namespace))
        return stored

    def key_holder(self, entry: Entry) -> str | None:
        slot = entry.owner_agent_id if entry.read_agents else ""
        row = self._conn.execute(self.dialect.key_holder, (entry.scope.value, entry.namespace, entry.team or "",
                                                           entry.key, slot)).fetchone()
        return str(row[0]) if row is not None and row[0] != entry.id else None

    def replace(self, entry: Entry, *, expected_etag: str) -> bool:
        return self._conn.execute(self.dialect.update_entry, self.dialect.update_params(entry, expected_etag)
                                  ).rowcount == 1

    def delete(self, entry_id: str, *, expected_etag: str) -> bool:
        m = self.dialect.mark
        return self._conn.execute(f"DELETE FROM entries WHERE id = {m} AND etag = {m}",
                                  (entry_id, expected_etag)).rowcount == 1

    def has_pending_conflict(self, entry_id: str) -> bool:
        return self._conn.execute(f"SELECT 1 FROM entries WHERE conflict_of = {self.dialect.mark} "
                                  f"AND {self.dialect.flag('conflict')} LIMIT 1", (entry_id,)).fetchone() is not None

    def audit(self, event: AuditEvent) -> None:
        self._conn.execute(self.dialect.insert_audit, self.dialect.audit_params(event))

    def mark_compacted(self, entry_ids: Sequence[str]) -> int:
        d, marked = self.dialect, 0
        for chunk in d.batches(entry_ids):
            ids, params = d.in_list("id", chunk)
            marked += self._conn.execute(f"UPDATE entries SET compacted = {d.true} WHERE {ids} "
                                         f"AND {d.flag('compacted', False)}", params).rowcount
        return marked

    def finish(self) -> None:
        """Before the commit: what the store does once the transaction's work is done."""


class RepositoryFrame:
    dialect: ClassVar[Dialect]
    transaction: ClassVar[Callable[[Any], WriteFrame]]  # the store's WriteFrame

    def __init__(self, db: Any, *, on_vector_change: Callable[[], None] | None = None,
                 on_insert: Callable[[set[tuple[str, str]]], None] | None = None) -> None:
        """Args:
            db: the store's database (`transact` and `read` run work on a connection's thread).
            on_vector_change: called after a commit that queued vector changes (wakes the applier).
            on_insert: called after a commit that inserted entries, with their (scope, namespace)s
                (lets the pruner look at namespaces that grew).
        """
        self._db = db
        self._on_vector_change = on_vector_change
        self._on_insert = on_insert

    async def transact(self, work: Callable[[Any], T]) -> T:
        done: list[WriteFrame] = []

        def run(conn: Any) -> T:
            tx = self.transaction(conn)
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

    async def _entries(self, sql: str, params: Sequence[object]) -> list[Entry]:
        rows = await self._db.read(lambda conn: conn.execute(sql, params).fetchall())
        return [self.dialect.row_to_entry(row) for row in rows]

    async def get_many(self, entry_ids: Sequence[str]) -> dict[str, Entry]:
        if not entry_ids:
            return {}
        ids, params = self.dialect.in_list("id", entry_ids)
        return {entry.id: entry for entry in await self._entries(f"{self.dialect.select_entry} WHERE {ids}", params)}

    async def list_page(self, query: ListQuery, after: Position | None, limit: int) -> list[Entry]:
        return await self._entries(*build_list_sql(self.dialect, query, after, limit))

    async def superseded_facts(self, entry_ids: Sequence[str]) -> list[Entry]:
        """`LineageStore`: the entries whose `superseded_by` is one of `entry_ids` (an index each store has)."""
        if not entry_ids:
            return []
        ids, params = self.dialect.in_list("superseded_by", entry_ids)
        return await self._entries(f"{self.dialect.select_entry} WHERE {ids} ORDER BY created_at, id", params)


def build_list_sql(d: Dialect, query: ListQuery, after: Position | None, limit: int, *,
                   areas: Sequence[Area] | None = None, superseded: bool | None = None
                   ) -> tuple[str, tuple[object, ...]]:
    """Keyset-paginated SELECT, newest first, using the (scope, namespace, created_at, id) index.
    `areas` (the memory console's browse) replaces `query.area`; `superseded` keeps only superseded
    (True) or only current (False) entries."""
    f, m = query.filters, d.mark
    area, params = area_clause(d, [query.area] if areas is None else areas)
    where = [area]
    if superseded is not None:
        where.append(f"superseded_by IS {'NOT ' if superseded else ''}NULL")
    if not f.include_expired:
        where.append(f"(expires_at IS NULL OR expires_at > {m})")
        params.append(query.now)
    for column, value in (
        ("layer", f.layer.value if f.layer else None),
        ("source", f.source.value if f.source else None),
        ("priority", f.priority.value if f.priority else None),
        ("owner_agent_id", f.owner_agent_id),
        ("session_id", f.session_id),
        ("key", f.key),
        ("domain", f.domain.value if f.domain else None),
        ("conflict", None if f.conflict is None else d.boolean(f.conflict)),
    ):
        if value is not None:
            where.append(f"{column} = {m}")
            params.append(value)
    for after_or_before, bound in ((">", f.created_after), ("<", f.created_before)):
        if bound:
            where.append(f"created_at {after_or_before} {m}")
            params.append(bound)
    if f.tags:
        tags, tag_params = d.tags_all("entries.tags", f.tags)
        where.append(tags)
        params += tag_params
    if after is not None:
        where.append(f"(created_at < {m} OR (created_at = {m} AND id < {m}))")
        params.extend([after.created_at, after.created_at, after.entry_id])
    sql = f"{d.select_entry} WHERE {' AND '.join(where)} ORDER BY created_at DESC, id DESC LIMIT {m}"
    params.append(limit)
    return sql, tuple(params)
