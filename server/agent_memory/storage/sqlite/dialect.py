"""SQLite's spelling of the repository frame's fragments (`agent_memory.storage.frame.dialect`):
`?` placeholders, flags stored as 0/1, tags and read lists as JSON text, long id lists split."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agent_memory.storage.frame.dialect import Dialect
from agent_memory.storage.sqlite.rows import row_to_entry


class SqliteDialect(Dialect):
    mark = "?"
    true = "1"
    false = "0"
    batch = 500
    row_to_entry = staticmethod(row_to_entry)

    def flag(self, column: str, on: bool = True) -> str:
        return f"{column} = {int(on)}"

    def in_list(self, column: str, values: Sequence[object]) -> tuple[str, list[object]]:
        return f"{column} IN ({', '.join('?' for _ in values)})", list(values)

    def tags_of(self, value: Any) -> list[str]:
        return list(json.loads(value))

    def reader_clause(self, alias: str, reader: str) -> tuple[str, list[object]]:
        # A read list is JSON text of agent ids (which hold no '"'), NULL for none: the common
        # case is one IS NULL; instr is exact and case-sensitive.
        return (f"({alias}read_agents IS NULL OR {alias}owner_agent_id = ? OR instr({alias}read_agents, ?) > 0)",
                [reader, f'"{reader}"'])


SQLITE = SqliteDialect()
