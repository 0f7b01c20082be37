"""The memory console's browse query on PostgreSQL: `memory_crud list`'s SQL over several areas."""

from __future__ import annotations

from agent_memory.core.cursor import Position
from agent_memory.core.models import Entry, ListQuery
from agent_memory.core.ports import BrowseQuery
from agent_memory.core.visibility import Area
from agent_memory.storage.postgres.database import PostgresDatabase
from agent_memory.storage.postgres.entries import build_list_sql
from agent_memory.storage.postgres.rows import row_to_entry


class PostgresBrowseStore:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def browse_page(self, query: BrowseQuery, after: Position | None, limit: int) -> list[Entry]:
        listing = ListQuery(area=Area(None), filters=query.filters, now=query.now)
        sql, params = build_list_sql(listing, after, limit, areas=query.areas, superseded=query.superseded)
        rows = await self._db.read(lambda conn: conn.execute(sql, params).fetchall())
        return [row_to_entry(row) for row in rows]
