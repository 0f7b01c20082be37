"""What operator commands and inspection read from SQLite (the `OperatorStore` port): the audit
trail, entry counts per partition, the vector backlog, sizes on disk, and entries in storage order."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_memory.core.models import Entry
from agent_memory.core.ports import AuditQuery, PartitionCount
from agent_memory.core.visibility import Area
from agent_memory.storage.audit_rows import audit_dicts, audit_select
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.rows import ENTRY_COLUMNS, row_to_entry
from agent_memory.storage.sqlite.visibility import area_clause

CHUNK = 500  # ids per IN (...) list


class SqliteOperatorStore:
    def __init__(self, db: Database, sqlite_file: str) -> None:
        self._db = db
        self._file = sqlite_file

    async def audit_rows(self, query: AuditQuery) -> list[dict[str, Any]]:
        sql, params = audit_select(query, "?")
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(sql, params)
        return audit_dicts(rows)

    async def partition_counts(self, areas: tuple[Area, ...] | None) -> list[PartitionCount]:
        where, params = "", []
        if areas is not None:
            clause, params = area_clause(areas)
            where = f" WHERE {clause}"
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(
                f"SELECT scope, namespace, layer, COUNT(*), SUM(compacted), SUM(conflict) FROM entries{where} "
                "GROUP BY scope, namespace, layer", params)
        return [PartitionCount(scope, namespace, layer, int(count), int(compacted or 0), int(conflicts or 0))
                for scope, namespace, layer, count, compacted, conflicts in rows]

    async def vector_backlog(self) -> int:
        return await self._count("SELECT COUNT(*) FROM vector_outbox")

    async def stored_vectors(self) -> int:
        return await self._count("SELECT COUNT(*) FROM entry_vectors")

    async def pending_vector_changes(self, entry_ids: Sequence[str]) -> int:
        left = 0
        for start in range(0, len(entry_ids), CHUNK):
            chunk = list(entry_ids[start:start + CHUNK])
            marks = ", ".join("?" for _ in chunk)
            left += await self._count(f"SELECT COUNT(*) FROM vector_outbox WHERE entry_id IN ({marks})", chunk)
        return left

    async def stored_ids(self, entry_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(entry_ids), CHUNK):
            chunk = list(entry_ids[start:start + CHUNK])
            marks = ", ".join("?" for _ in chunk)
            async with self._db.reading() as conn:
                found |= {row[0] for row in await conn.execute_fetchall(
                    f"SELECT id FROM entries WHERE id IN ({marks})", chunk)}
        return found

    async def entries_after(self, area: Area | None, after: int, limit: int) -> list[tuple[int, Entry]]:
        where, params = "", []
        if area is not None:
            clause, params = area_clause([area])
            where = f"{clause} AND "
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(
                f"SELECT rowid, {', '.join(ENTRY_COLUMNS)} FROM entries WHERE {where}rowid > ? ORDER BY rowid LIMIT ?",
                [*params, after, limit])
        return [(int(row[0]), row_to_entry(row[1:])) for row in rows]

    async def storage_bytes(self) -> int | None:
        if not self._file or self._file == ":memory:":
            return None
        base = Path(self._file)
        return sum(_size(base.with_name(base.name + suffix)) for suffix in ("", "-wal", "-shm"))

    async def _count(self, sql: str, params: list[object] | None = None) -> int:
        async with self._db.reading() as conn:
            return int(list(await conn.execute_fetchall(sql, params or []))[0][0])


def _size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else 0
