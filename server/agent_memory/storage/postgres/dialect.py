"""PostgreSQL's spelling of the repository frame's fragments (`agent_memory.storage.frame.dialect`):
psycopg `%s` placeholders, boolean columns, text[] tags and read lists, id lists as one array."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_memory.storage.frame.dialect import Dialect
from agent_memory.storage.postgres.rows import row_to_entry


class PostgresDialect(Dialect):
    mark = "%s"
    true = "TRUE"
    false = "FALSE"
    batch = 0
    row_to_entry = staticmethod(row_to_entry)

    def flag(self, column: str, on: bool = True) -> str:
        return column if on else f"NOT {column}"

    def in_list(self, column: str, values: Sequence[object]) -> tuple[str, list[object]]:
        return f"{column} = ANY(%s)", [list(values)]

    def tags_of(self, value: Any) -> list[str]:
        return list(value)

    def reader_clause(self, alias: str, reader: str) -> tuple[str, list[object]]:
        # A read list is text[], NULL for none.
        return (f"({alias}read_agents IS NULL OR {alias}owner_agent_id = %s OR %s = ANY({alias}read_agents))",
                [reader, reader])


POSTGRES = PostgresDialect()
