"""The entries FTS5 ranks best for a MATCH, among those a caller may see."""

from __future__ import annotations

import sqlite3
from collections.abc import Hashable
from typing import Any

from agent_memory.storage.sqlite.rows import ENTRY_COLUMNS

COLUMNS = ", ".join(f"e.{c}" for c in ENTRY_COLUMNS)
ORDER = "ORDER BY bm25(entries_fts, 1.0, 0.5)"
SKIP_AFTER_MISS = 16
MAX_KEYS = 1024


class BestMatches:
    """The entries FTS5 ranks best for a MATCH among those satisfying a WHERE clause."""

    def __init__(self) -> None:
        self._skip: dict[Hashable, int] = {}  # who recently had best matches hidden: calls to go without trying

    def __call__(self, conn: sqlite3.Connection, match: str | None, where: str, params: list[object], limit: int,
                 key: Hashable) -> list[tuple[Any, ...]]:
        """Rows (ENTRY_COLUMNS, then rowid) of the `limit` entries matching `match` that satisfy
        `where` (on alias e), best first by FTS5's bm25. `key` names the caller and filters
        behind `where`.

        Joining every match to its entry to test `where` costs more than ranking the matches,
        and usually nothing is filtered out (a caller alone in its store). So: the `limit` best
        matches of all entries first, then `where` on those rows only. When all of them pass, or
        fewer than `limit` entries match at all, that is the answer: the same rows as the full
        query, ties included (SQLite keeps tied rows in scan order in both). Otherwise the full
        query runs, and for this `key` the shortcut is not tried again for a while."""
        full = (f"SELECT {COLUMNS}, e.rowid FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid "
                f"WHERE entries_fts MATCH ? AND {where} {ORDER} LIMIT ?")
        skip = self._skip.pop(key, 0)
        if match is None or skip:
            if skip > 1:
                self._skip[key] = skip - 1
            return conn.execute(full, [match, *params, limit]).fetchall()
        best = [row[0] for row in conn.execute(
            f"SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? {ORDER} LIMIT ?", [match, limit])]
        if not best:
            return []
        marks = ", ".join("?" for _ in best)
        rows = conn.execute(f"SELECT {COLUMNS}, e.rowid FROM entries e WHERE e.rowid IN ({marks}) AND {where}",
                            [*best, *params]).fetchall()
        if len(rows) < len(best) and len(best) == limit:
            if len(self._skip) >= MAX_KEYS:
                self._skip.clear()
            self._skip[key] = SKIP_AFTER_MISS
            return conn.execute(full, [match, *params, limit]).fetchall()
        position = {rowid: i for i, rowid in enumerate(best)}
        rows.sort(key=lambda row: position[row[-1]])
        return rows
