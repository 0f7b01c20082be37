"""What operator commands and inspection read from PostgreSQL (the `OperatorStore` port, as
`agent_memory.storage.sqlite.operator`): the audit trail, entry counts per partition, the vector
backlog, the database's size, and entries in storage order (`seq`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from agent_memory.core.models import Entry
from agent_memory.core.ports import AuditQuery, PartitionCount
from agent_memory.core.visibility import Area
from agent_memory.storage.audit_rows import audit_dicts, audit_select
from agent_memory.storage.postgres.database import PostgresDatabase
from agent_memory.storage.postgres.rows import ENTRY_COLUMNS, row_to_entry
from agent_memory.storage.postgres.visibility import area_clause


class PostgresOperatorStore:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def audit_rows(self, query: AuditQuery) -> list[dict[str, Any]]:
        sql, params = audit_select(query, "%s")
        rows = await self._db.read(lambda conn: conn.execute(sql, params).fetchall())
        return audit_dicts(rows)

    async def partition_counts(self, areas: tuple[Area, ...] | None) -> list[PartitionCount]:
        where, params = "", []
        if areas is not None:
            clause, params = area_clause(areas)
            where = f" WHERE {clause}"
        rows = await self._db.read(lambda conn: conn.execute(
            "SELECT scope, namespace, layer, COUNT(*), COUNT(*) FILTER (WHERE compacted), "
            f"COUNT(*) FILTER (WHERE conflict) FROM entries{where} GROUP BY scope, namespace, layer",
            params).fetchall())
        return [PartitionCount(scope, namespace, layer, int(count), int(compacted), int(conflicts))
                for scope, namespace, layer, count, compacted, conflicts in rows]

    async def vector_backlog(self) -> int:
        return await self._count("SELECT COUNT(*) FROM vector_outbox")

    async def stored_vectors(self) -> int:
        return await self._count("SELECT COUNT(*) FROM entry_vectors")

    async def pending_vector_changes(self, entry_ids: Sequence[str]) -> int:
        return await self._count("SELECT COUNT(*) FROM vector_outbox WHERE entry_id = ANY(%s)", [list(entry_ids)])

    async def stored_ids(self, entry_ids: Sequence[str]) -> set[str]:
        rows = await self._db.read(lambda conn: conn.execute(
            "SELECT id FROM entries WHERE id = ANY(%s)", (list(entry_ids),)).fetchall())
        return {row[0] for row in rows}

    async def entries_after(self, area: Area | None, after: int, limit: int) -> list[tuple[int, Entry]]:
        where, params = "", []
        if area is not None:
            clause, params = area_clause([area])
            where = f"{clause} AND "
        rows = await self._db.read(lambda conn: conn.execute(
            f"SELECT seq, {', '.join(ENTRY_COLUMNS)} FROM entries WHERE {where}seq > %s ORDER BY seq LIMIT %s",
            [*params, after, limit]).fetchall())
        return [(int(row[0]), row_to_entry(row[1:])) for row in rows]

    async def storage_bytes(self) -> int | None:
        """The whole database's size (None when this role may not ask for it)."""
        try:
            row = await self._db.read(lambda conn: conn.execute(
                "SELECT pg_database_size(current_database())").fetchone())
        except psycopg.errors.InsufficientPrivilege:
            return None
        return int(row[0])

    async def _count(self, sql: str, params: list[object] | None = None) -> int:
        row = await self._db.read(lambda conn: conn.execute(sql, params or []).fetchone())
        return int(row[0])
