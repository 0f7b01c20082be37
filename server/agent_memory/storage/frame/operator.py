"""What operator commands and inspection read (the `OperatorStore` port), for either store: the
audit trail, entry counts per partition, the vector backlog, and entries in storage order. A store
adds its size on disk and says how it counts flags per partition and numbers its rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from agent_memory.core.access.visibility import Area
from agent_memory.core.model.models import Entry
from agent_memory.core.ports import AuditQuery, PartitionCount
from agent_memory.storage.audit_rows import audit_dicts, audit_select
from agent_memory.storage.entry_rows import ENTRY_COLUMNS
from agent_memory.storage.frame.dialect import Dialect, Reader
from agent_memory.storage.frame.visibility import area_clause


class OperatorFrame:
    dialect: ClassVar[Dialect]
    position: ClassVar[str]  # the entries' storage order (a column)
    flag_counts: ClassVar[str]  # per group: how many are compacted, how many conflicts

    def __init__(self, db: Reader) -> None:
        self._db = db

    async def _rows(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        return await self._db.read(lambda conn: conn.execute(sql, params).fetchall())

    async def _count(self, sql: str, params: Sequence[object] = ()) -> int:
        return int((await self._rows(sql, params))[0][0])

    async def audit_rows(self, query: AuditQuery) -> list[dict[str, Any]]:
        return audit_dicts(await self._rows(*audit_select(query, self.dialect.mark)))

    async def partition_counts(self, areas: tuple[Area, ...] | None) -> list[PartitionCount]:
        where, params = "", []
        if areas is not None:
            clause, params = area_clause(self.dialect, areas)
            where = f" WHERE {clause}"
        rows = await self._rows(f"SELECT scope, namespace, layer, COUNT(*), {self.flag_counts} FROM entries{where} "
                                "GROUP BY scope, namespace, layer", params)
        return [PartitionCount(scope, namespace, layer, int(count), int(compacted or 0), int(conflicts or 0))
                for scope, namespace, layer, count, compacted, conflicts in rows]

    async def vector_backlog(self, areas: tuple[Area, ...] | None = None) -> int:
        if areas is None:
            return await self._count("SELECT COUNT(*) FROM vector_outbox")
        clause, params = area_clause(self.dialect, areas, alias="e.")
        return await self._count(f"SELECT COUNT(*) FROM vector_outbox o JOIN entries e ON e.id = o.entry_id "
                                 f"WHERE {clause}", params)

    async def stored_vectors(self) -> int:
        return await self._count("SELECT COUNT(*) FROM entry_vectors")

    async def pending_vector_changes(self, entry_ids: Sequence[str]) -> int:
        left = 0
        for chunk in self.dialect.batches(entry_ids):
            ids, params = self.dialect.in_list("entry_id", chunk)
            left += await self._count(f"SELECT COUNT(*) FROM vector_outbox WHERE {ids}", params)
        return left

    async def stored_ids(self, entry_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for chunk in self.dialect.batches(entry_ids):
            ids, params = self.dialect.in_list("id", chunk)
            found |= {row[0] for row in await self._rows(f"SELECT id FROM entries WHERE {ids}", params)}
        return found

    async def entries_after(self, area: Area | None, after: int, limit: int) -> list[tuple[int, Entry]]:
        where, params = "", []
        if area is not None:
            clause, params = area_clause(self.dialect, [area])
            where = f"{clause} AND "
        m, position = self.dialect.mark, self.position
        rows = await self._rows(f"SELECT {position}, {', '.join(ENTRY_COLUMNS)} FROM entries "
                                f"WHERE {where}{position} > {m} ORDER BY {position} LIMIT {m}", [*params, after, limit])
        return [(int(row[0]), self.dialect.row_to_entry(row[1:])) for row in rows]
