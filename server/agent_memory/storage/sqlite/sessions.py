"""Session turns, reflection marks and earlier reflections (implements `SessionStore`).

Every query is pinned to one agent in one team: the namespace is the agent's id, and only entries
that agent owns in that team count (the same rule as reading agent-scope memory)."""

from __future__ import annotations

import json
import re

from agent_memory.core.models import Entry
from agent_memory.core.ports import Mark, SessionKey, SessionRef
from agent_memory.core.visibility import session_area
from agent_memory.storage.sqlite.entries import SqliteEntryRepository
from agent_memory.storage.sqlite.rows import ENTRY_COLUMNS, row_to_entry
from agent_memory.storage.sqlite.visibility import area_clause

_COLUMNS = ", ".join(ENTRY_COLUMNS)
# A session's turns: its session-layer entries that are not compaction summaries or conflicts.
_TURN = "session_id = ? AND layer = 'session' AND source != 'reflection' AND conflict = 0"
# Its compaction summaries (those naming the turns they cover carry a `turns:` tag).
_SUMMARY = "session_id = ? AND layer = 'session' AND source = 'reflection'"
_NUMBER = re.compile(r"\d+")


def _mine(agent_id: str, team: str, namespace: str = "") -> tuple[str, list[object]]:
    return area_clause([session_area(agent_id, team, namespace)])


def _turns(key: SessionKey) -> tuple[str, list[object]]:
    mine, params = _mine(key.agent_id, key.team, key.namespace)
    return f"{mine} AND {_TURN}", [*params, key.session_id]


class SqliteSessionStore(SqliteEntryRepository):
    async def session_turns(self, key: SessionKey, *, after: Mark | None = None,
                            compacted: bool | None = None) -> list[tuple[int, Entry]]:
        turns, params = _turns(key)
        sql = f"SELECT rowid, {_COLUMNS} FROM entries WHERE {turns}"
        if after is not None:
            # After the mark's position, or written since it was set (a position can be reused
            # when the newest entry is deleted).
            sql += " AND (rowid > ? OR updated_at > ?)"
            params += [after.position, after.at]
        if compacted is not None:
            sql += f" AND compacted = {int(compacted)}"
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(sql + " ORDER BY created_at, rowid", params)
        return [(row[0], row_to_entry(row[1:])) for row in rows]

    async def uncompacted_chars(self, key: SessionKey) -> int:
        turns, params = _turns(key)
        async with self._db.reading() as conn:
            rows = list(await conn.execute_fetchall(
                f"SELECT COALESCE(SUM(length(content)), 0) FROM entries WHERE {turns} AND compacted = 0", params))
        return int(rows[0][0])

    async def compacted_through(self, key: SessionKey) -> int:
        turns, params = _turns(key)
        mine, mine_params = _mine(key.agent_id, key.team, key.namespace)
        async with self._db.reading() as conn:
            counted = list(await conn.execute_fetchall(
                f"SELECT COUNT(*) FROM entries WHERE {turns} AND compacted = 1", params))
            summaries = await conn.execute_fetchall(f"SELECT tags FROM entries WHERE {mine} AND {_SUMMARY}",
                                                    [*mine_params, key.session_id])
        highest = int(counted[0][0])
        for (tags,) in summaries:
            for tag in json.loads(tags):
                if tag.startswith("turns:"):
                    highest = max([highest, *(int(n) for n in _NUMBER.findall(tag))])
        return highest

    async def reflection_mark(self, key: SessionKey) -> Mark:
        async with self._db.reading() as conn:
            rows = list(await conn.execute_fetchall(
                "SELECT last_rowid, reflected_at FROM reflection_marks WHERE namespace = ? AND team = ? "
                "AND session_id = ?", [key.home, key.team, key.session_id]))
        return Mark(int(rows[0][0]), rows[0][1]) if rows else Mark()

    async def reflections(self, agent_id: str, team: str, namespace: str = "") -> list[Entry]:
        mine, params = _mine(agent_id, team, namespace)
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(
                f"SELECT {_COLUMNS} FROM entries WHERE {mine} AND source = 'reflection' "
                "AND layer IN ('long_term', 'meta') AND conflict = 0 AND superseded_by IS NULL "
                "ORDER BY updated_at DESC LIMIT 5000", params)
        return [row_to_entry(row) for row in rows]

    async def sessions_to_reflect(self, limit: int) -> list[SessionRef]:
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(
                "SELECT e.namespace, e.team, e.session_id, MIN(e.owner_agent_id) FROM entries e "
                "LEFT JOIN reflection_marks m "
                "ON m.namespace = e.namespace AND m.team = e.team AND m.session_id = e.session_id "
                "WHERE e.scope = 'agent' AND e.session_id IS NOT NULL AND e.layer = 'session' "
                "AND e.source != 'reflection' AND e.conflict = 0 "
                "AND (e.owner_agent_id = e.namespace "
                "OR substr(e.namespace, 1, length(e.owner_agent_id) + 1) = e.owner_agent_id || '/') "
                "AND e.team IS NOT NULL GROUP BY e.namespace, e.team, e.session_id "
                "HAVING MAX(e.rowid) > COALESCE(MAX(m.last_rowid), 0) "
                "OR MAX(e.updated_at) > COALESCE(MAX(m.reflected_at), '') "
                "ORDER BY MAX(e.rowid) LIMIT ?", (limit,))
        return [SessionRef(namespace=r[0], session_id=r[2], owner_agent_id=r[3], team=r[1]) for r in rows]
