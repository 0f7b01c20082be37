"""SQLite's spelling of the repository frame's fragments (`agent_memory.storage.frame.dialect`):
`?` placeholders, flags stored as 0/1, tags and read lists as JSON text, long id lists split."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agent_memory.core.ports import Partition
from agent_memory.storage.frame.dialect import Dialect
from agent_memory.storage.sqlite import rows
from agent_memory.storage.sqlite.audit import INSERT_AUDIT, audit_params


class SqliteDialect(Dialect):
    mark = "?"
    true = "1"
    false = "0"
    batch = 500
    pin = "+"  # unary +: SQLite then uses no index for the column

    def flag(self, column: str, on: bool = True) -> str:
        return f"{column} = {int(on)}"

    def in_list(self, column: str, values: Sequence[object]) -> tuple[str, list[object]]:
        return f"{column} IN ({', '.join('?' for _ in values)})", list(values)

    def in_partitions(self, partitions: Sequence[Partition]) -> tuple[str, list[object]]:
        # Unary + keeps SQLite from scanning a whole partition through the namespace index when the
        # rows are already pinned down (by id, or by the FTS match).
        pairs = ", ".join("(?, ?)" for _ in partitions)
        return (f"(+e.scope, +e.namespace) IN (VALUES {pairs})",
                [v for p in partitions for v in (p.scope, p.namespace)])

    def boolean(self, value: bool) -> object:
        return int(value)

    def tags_all(self, column: str, tags: Sequence[str]) -> tuple[str, list[object]]:
        marks = ", ".join("?" for _ in tags)
        return (f"(SELECT COUNT(DISTINCT value) FROM json_each({column}) WHERE value IN ({marks})) = ?",
                [*tags, len(tags)])

    def tags_of(self, value: Any) -> list[str]:
        return list(json.loads(value))

    def reader_clause(self, alias: str, reader: str) -> tuple[str, list[object]]:
        # A read list is JSON text of agent ids (which hold no '"'), NULL for none: the common
        # case is one IS NULL; instr is exact and case-sensitive.
        return (f"({alias}read_agents IS NULL OR {alias}owner_agent_id = ? OR instr({alias}read_agents, ?) > 0)",
                [reader, f'"{reader}"'])


SQLITE = SqliteDialect(rows, INSERT_AUDIT, audit_params)
