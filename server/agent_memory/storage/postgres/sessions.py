"""Session turns, reflection marks and earlier reflections on PostgreSQL (implements `SessionStore`).

As on SQLite (`agent_memory.storage.sqlite.sessions`), every query is pinned to one agent in one
team. A turn's storage position is its turn number (`turn_seq`), not `seq`: turn numbers of a
session commit in order, so a mark never passes over a turn another server commits late
(storage/postgres/turn_numbers.py says why and how).
"""

from __future__ import annotations

import re

import psycopg

from agent_memory.core.models import Entry
from agent_memory.core.ports import Mark, SessionKey, SessionRef
from agent_memory.core.visibility import session_area
from agent_memory.storage.postgres.entries import PostgresEntryRepository
from agent_memory.storage.postgres.rows import ENTRY_COLUMNS, row_to_entry
from agent_memory.storage.postgres.visibility import area_clause

_COLUMNS = ", ".join(ENTRY_COLUMNS)
# A session's turns: its session-layer entries that are not compaction summaries or conflicts.
_TURN = "session_id = %s AND layer = 'session' AND source <> 'reflection' AND NOT conflict"
# Its compaction summaries (those naming the turns they cover carry a `turns:` tag).
_SUMMARY = "session_id = %s AND layer = 'session' AND source = 'reflection'"
_NUMBER = re.compile(r"\d+")


def _mine(agent_id: str, team: str, namespace: str = "") -> tuple[str, list[object]]:
    return area_clause([session_area(agent_id, team, namespace)])


def _turns(key: SessionKey) -> tuple[str, list[object]]:
    mine, params = _mine(key.agent_id, key.team, key.namespace)
    return f"{mine} AND {_TURN}", [*params, key.session_id]


class PostgresSessionStore(PostgresEntryRepository):
    async def session_turns(self, key: SessionKey, *, after: Mark | None = None,
                            compacted: bool | None = None) -> list[tuple[int, Entry]]:
        turns, params = _turns(key)
        # Every turn has a number (the trigger gives one to each); COALESCE only guards the type.
        sql = f"SELECT COALESCE(turn_seq, 0), {_COLUMNS} FROM entries WHERE {turns}"
        if after is not None:
            sql += " AND turn_seq > %s"  # an edited turn was renumbered: it counts as new
            params.append(after.position)
        if compacted is not None:
            sql += f" AND {'' if compacted else 'NOT '}compacted"
        rows = await self._db.read(lambda conn: conn.execute(sql + " ORDER BY created_at, seq", params).fetchall())
        return [(int(row[0]), row_to_entry(row[1:])) for row in rows]

    async def uncompacted_chars(self, key: SessionKey) -> int:
        turns, params = _turns(key)
        row = await self._db.read(lambda conn: conn.execute(
            f"SELECT COALESCE(SUM(length(content)), 0) FROM entries WHERE {turns} AND NOT compacted",
            params).fetchone())
        return int(row[0])

    async def compacted_through(self, key: SessionKey) -> int:
        turns, params = _turns(key)
        mine, mine_params = _mine(key.agent_id, key.team, key.namespace)

        def read(conn: psycopg.Connection) -> tuple[int, list[list[str]]]:
            counted = conn.execute(f"SELECT COUNT(*) FROM entries WHERE {turns} AND compacted", params).fetchone()
            summaries = conn.execute(f"SELECT tags FROM entries WHERE {mine} AND {_SUMMARY}",
                                     [*mine_params, key.session_id]).fetchall()
            return int(counted[0]), [list(row[0]) for row in summaries]

        highest, summaries = await self._db.read(read, snapshot=True)
        for tags in summaries:
            for tag in tags:
                if tag.startswith("turns:"):
                    highest = max([highest, *(int(n) for n in _NUMBER.findall(tag))])
        return highest

    async def reflection_mark(self, key: SessionKey) -> Mark:
        row = await self._db.read(lambda conn: conn.execute(
            "SELECT last_turn, reflected_at FROM reflection_marks WHERE namespace = %s AND team = %s "
            "AND session_id = %s", (key.home, key.team, key.session_id)).fetchone())
        return Mark(int(row[0]), row[1]) if row else Mark()

    async def reflections(self, agent_id: str, team: str, namespace: str = "") -> list[Entry]:
        mine, params = _mine(agent_id, team, namespace)
        rows = await self._db.read(lambda conn: conn.execute(
            f"SELECT {_COLUMNS} FROM entries WHERE {mine} AND source = 'reflection' "
            "AND layer IN ('long_term', 'meta') AND NOT conflict AND superseded_by IS NULL "
            "ORDER BY updated_at DESC LIMIT 5000", params).fetchall())
        return [row_to_entry(row) for row in rows]

    async def sessions_to_reflect(self, limit: int) -> list[SessionRef]:
        rows = await self._db.read(lambda conn: conn.execute(
            "SELECT e.namespace, e.team, e.session_id, MIN(e.owner_agent_id) FROM entries e "
            "LEFT JOIN reflection_marks m "
            "ON m.namespace = e.namespace AND m.team = e.team AND m.session_id = e.session_id "
            "WHERE e.scope = 'agent' AND e.session_id IS NOT NULL AND e.layer = 'session' "
            "AND e.source <> 'reflection' AND NOT e.conflict "
            "AND (e.owner_agent_id = e.namespace "
            "OR substr(e.namespace, 1, length(e.owner_agent_id) + 1) = e.owner_agent_id || '/') "
            "AND e.team IS NOT NULL GROUP BY e.namespace, e.team, e.session_id "
            "HAVING MAX(e.turn_seq) > COALESCE(MAX(m.last_turn), 0) "
            "ORDER BY MAX(e.seq) LIMIT %s", (limit,)).fetchall())
        return [SessionRef(namespace=r[0], session_id=r[2], owner_agent_id=r[3], team=r[1]) for r in rows]
