"""The memory console's browse query: `memory_crud list`'s SQL over several areas."""

from __future__ import annotations

from typing import Any, ClassVar

from agent_memory.core.access.visibility import Area
from agent_memory.core.model.cursor import Position
from agent_memory.core.model.models import Entry
from agent_memory.core.ports import BrowseQuery, ListQuery
from agent_memory.storage.frame.dialect import Dialect, Reader
from agent_memory.storage.frame.entries import build_list_sql


class BrowseFrame:
    """Implements `BrowseStore`."""

    dialect: ClassVar[Dialect]

    def __init__(self, db: Reader) -> None:
        self._db = db

    async def browse_page(self, query: BrowseQuery, after: Position | None, limit: int) -> list[Entry]:
        listing = ListQuery(area=Area(None), filters=query.filters, now=query.now)
        sql, params = build_list_sql(self.dialect, listing, after, limit, areas=query.areas,
                                     superseded=query.superseded)
        rows: list[Any] = await self._db.read(lambda conn: conn.execute(sql, params).fetchall())
        return [self.dialect.row_to_entry(row) for row in rows]
