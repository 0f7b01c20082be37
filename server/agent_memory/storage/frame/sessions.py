"""Session turns, reflection marks and earlier reflections (implements `SessionStore`), for either
store: its `Dialect`, and where a store counts a turn's position (`SessionColumns`).

Every query is pinned to one agent in one team: the namespace is the agent's id, and only entries
that agent owns in that team count (the same rule as reading agent-scope memory)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from agent_memory.core.access.visibility import session_area
from agent_memory.core.model.models import Entry
from agent_memory.core.ports import Mark, SessionKey, SessionRef
from agent_memory.storage.entry_rows import ENTRY_COLUMNS
from agent_memory.storage.frame.dialect import Dialect, Reader
from agent_memory.storage.frame.visibility import area_clause

_COLUMNS = ", ".join(ENTRY_COLUMNS)
_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True)
class SessionColumns:
    """How a store numbers a session's turns and remembers how far reflection went."""

    position: str  # a turn's position, selected first
    after: str  # turns after a mark's position (parameters: the position, then the mark's time)
    after_params: int  # how many of those two `after` takes
    order: str  # turns in the order they were written
    mark: str  # reflection_marks' column holding the position
    kept: str  # ... and the one holding how far turns were carried into long-term memory
    unreflected: str  # HAVING: a session has turns past its mark (e: entries, m: marks)
    newest: str  # ORDER BY: sessions by their newest entry


class SessionFrame:
    dialect: ClassVar[Dialect]
    columns: ClassVar[SessionColumns]
    _db: Reader

    def _mine(self, agent_id: str, team: str, namespace: str = "") -> tuple[str, list[object]]:
        return area_clause(self.dialect, [session_area(agent_id, team, namespace)])

    def _turns(self, key: SessionKey) -> tuple[str, list[object]]:
        """A session's turns: its session-layer entries that are not compaction summaries or conflicts."""
        mine, params = self._mine(key.agent_id, key.team, key.namespace)
        turn = (f"session_id = {self.dialect.mark} AND layer = 'session' AND source <> 'reflection' "
                f"AND {self.dialect.flag('conflict', False)}")
        return f"{mine} AND {turn}", [*params, key.session_id]

    async def _rows(self, sql: str, params: list[object] | tuple[object, ...]) -> list[Any]:
        return await self._db.read(lambda conn: conn.execute(sql, params).fetchall())

    async def session_turns(self, key: SessionKey, *, after: Mark | None = None,
                            compacted: bool | None = None) -> list[tuple[int, Entry]]:
        turns, params = self._turns(key)
        sql = f"SELECT {self.columns.position}, {_COLUMNS} FROM entries WHERE {turns}"
        if after is not None:
            sql += f" AND {self.columns.after}"
            params += [after.position, after.at][:self.columns.after_params]
        if compacted is not None:
            sql += f" AND {self.dialect.flag('compacted', compacted)}"
        rows = await self._rows(f"{sql} ORDER BY {self.columns.order}", params)
        return [(int(row[0]), self.dialect.row_to_entry(row[1:])) for row in rows]

    async def uncompacted_chars(self, key: SessionKey) -> int:
        turns, params = self._turns(key)
        rows = await self._rows("SELECT COALESCE(SUM(length(content)), 0) FROM entries "
                                f"WHERE {turns} AND {self.dialect.flag('compacted', False)}", params)
        return int(rows[0][0])

    async def compacted_through(self, key: SessionKey) -> int:
        """The highest turn number compaction has covered: turns marked compacted, or named by a
        compaction summary's `turns:` tag."""
        d = self.dialect
        turns, params = self._turns(key)
        mine, mine_params = self._mine(key.agent_id, key.team, key.namespace)
        summary = f"session_id = {d.mark} AND layer = 'session' AND source = 'reflection'"

        def read(conn: Any) -> tuple[int, list[list[str]]]:
            counted = conn.execute(f"SELECT COUNT(*) FROM entries WHERE {turns} AND {d.flag('compacted')}",
                                   params).fetchone()
            summaries = conn.execute(f"SELECT tags FROM entries WHERE {mine} AND {summary}",
                                     [*mine_params, key.session_id]).fetchall()
            return int(counted[0]), [d.tags_of(row[0]) for row in summaries]

        highest, summaries = await self._db.read(read, snapshot=True)
        for tags in summaries:
            for tag in tags:
                if tag.startswith("turns:"):
                    highest = max([highest, *(int(n) for n in _NUMBER.findall(tag))])
        return highest

    async def digested_through(self, key: SessionKey) -> int:
        """The highest turn number the session's long-term digests name (tag `turns:<first>-<last>`)."""
        mine, params = self._mine(key.agent_id, key.team, key.namespace)
        rows = await self._rows(f"SELECT tags FROM entries WHERE {mine} AND session_id = {self.dialect.mark} "
                                "AND layer = 'long_term' AND source = 'reflection' AND domain = 'session_summary'",
                                [*params, key.session_id])
        return max([0, *(int(n) for row in rows for tag in self.dialect.tags_of(row[0])
                         if tag.startswith("turns:") for n in _NUMBER.findall(tag))])

    async def reflection_mark(self, key: SessionKey) -> Mark:
        m = self.dialect.mark
        rows = await self._rows(f"SELECT {self.columns.mark}, reflected_at FROM reflection_marks "
                                f"WHERE namespace = {m} AND team = {m} AND session_id = {m}",
                                (key.home, key.team, key.session_id))
        return Mark(int(rows[0][0]), rows[0][1]) if rows else Mark()

    async def kept_mark(self, key: SessionKey) -> int:
        m = self.dialect.mark
        rows = await self._rows(f"SELECT {self.columns.kept} FROM reflection_marks "
                                f"WHERE namespace = {m} AND team = {m} AND session_id = {m}",
                                (key.home, key.team, key.session_id))
        return int(rows[0][0]) if rows else 0

    async def reflections(self, agent_id: str, team: str, namespace: str = "") -> list[Entry]:
        mine, params = self._mine(agent_id, team, namespace)
        rows = await self._rows(  # a session's digest (domain session_summary) is no fact to compare with
            f"SELECT {_COLUMNS} FROM entries WHERE {mine} AND source = 'reflection' "
            "AND layer IN ('long_term', 'meta') AND (domain IS NULL OR domain <> 'session_summary') "
            f"AND {self.dialect.flag('conflict', False)} "
            "AND superseded_by IS NULL ORDER BY updated_at DESC LIMIT 5000", params)
        return [self.dialect.row_to_entry(row) for row in rows]

    async def sessions_to_reflect(self, limit: int) -> list[SessionRef]:
        rows = await self._rows(
            "SELECT e.namespace, e.team, e.session_id, MIN(e.owner_agent_id) FROM entries e "
            "LEFT JOIN reflection_marks m "
            "ON m.namespace = e.namespace AND m.team = e.team AND m.session_id = e.session_id "
            "WHERE e.scope = 'agent' AND e.session_id IS NOT NULL AND e.layer = 'session' "
            f"AND e.source <> 'reflection' AND {self.dialect.flag('e.conflict', False)} "
            "AND (e.owner_agent_id = e.namespace "
            "OR substr(e.namespace, 1, length(e.owner_agent_id) + 1) = e.owner_agent_id || '/') "
            "AND e.team IS NOT NULL GROUP BY e.namespace, e.team, e.session_id "
            f"HAVING {self.columns.unreflected} ORDER BY {self.columns.newest} LIMIT {self.dialect.mark}", (limit,))
        return [SessionRef(namespace=r[0], session_id=r[2], owner_agent_id=r[3], team=r[1]) for r in rows]
