"""Session turns, reflection watermarks and earlier reflections (implements `SessionStore`)."""

from __future__ import annotations

from agent_memory.core.models import Entry
from agent_memory.core.ports import SessionRef
from agent_memory.storage.sqlite.entries import SqliteEntryRepository
from agent_memory.storage.sqlite.rows import ENTRY_COLUMNS, row_to_entry

_COLUMNS = ", ".join(ENTRY_COLUMNS)
# A session's turns: its session-layer entries that are not compaction summaries or conflicts.
_TURNS = ("scope = 'agent' AND namespace = ? AND session_id = ? AND layer = 'session' "
          "AND source != 'reflection' AND conflict = 0")


class SqliteSessionStore(SqliteEntryRepository):
    async def session_turns(self, namespace: str, session_id: str, *, after: int = 0,
                            compacted: bool | None = None) -> list[tuple[int, Entry]]:
        sql = f"SELECT rowid, {_COLUMNS} FROM entries WHERE {_TURNS} AND rowid > ?"
        params: list[object] = [namespace, session_id, after]
        if compacted is not None:
            sql += " AND compacted = ?"
            params.append(int(compacted))
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(sql + " ORDER BY created_at, rowid", params)
        return [(row[0], row_to_entry(row[1:])) for row in rows]

    async def uncompacted_chars(self, namespace: str, session_id: str) -> int:
        async with self._db.reading() as conn:
            rows = list(await conn.execute_fetchall(
                f"SELECT COALESCE(SUM(length(content)), 0) FROM entries WHERE {_TURNS} AND compacted = 0",
                (namespace, session_id)))
        return int(rows[0][0])

    async def reflection_mark(self, namespace: str, session_id: str) -> int:
        async with self._db.reading() as conn:
            rows = list(await conn.execute_fetchall(
                "SELECT last_rowid FROM reflection_marks WHERE namespace = ? AND session_id = ?",
                (namespace, session_id)))
        return int(rows[0][0]) if rows else 0

    async def reflections(self, namespace: str) -> list[Entry]:
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(
                f"SELECT {_COLUMNS} FROM entries WHERE scope = 'agent' AND namespace = ? AND source = 'reflection' "
                "AND layer IN ('long_term', 'meta') AND conflict = 0 ORDER BY updated_at DESC LIMIT 5000",
                (namespace,))
        return [row_to_entry(row) for row in rows]

    async def sessions_to_reflect(self, limit: int) -> list[SessionRef]:
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(
                "SELECT e.namespace, e.session_id, MIN(e.owner_agent_id), MIN(e.team), MAX(e.rowid), "
                "COALESCE(MAX(m.last_rowid), 0) FROM entries e LEFT JOIN reflection_marks m "
                "ON m.namespace = e.namespace AND m.session_id = e.session_id "
                "WHERE e.scope = 'agent' AND e.session_id IS NOT NULL AND e.layer = 'session' "
                "AND e.source != 'reflection' AND e.conflict = 0 "
                "GROUP BY e.namespace, e.session_id HAVING MAX(e.rowid) > COALESCE(MAX(m.last_rowid), 0) "
                "ORDER BY MAX(e.rowid) LIMIT ?", (limit,))
        return [SessionRef(namespace=r[0], session_id=r[1], owner_agent_id=r[2], team=r[3] or "") for r in rows]
