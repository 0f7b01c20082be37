"""PostgreSQL's spelling of the repository frame's fragments (`agent_memory.storage.frame.dialect`):
psycopg `%s` placeholders, boolean columns, text[] tags and read lists, id lists as one array."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_memory.core.ports import Partition
from agent_memory.storage.frame.dialect import Dialect
from agent_memory.storage.postgres import rows
from agent_memory.storage.postgres.audit import INSERT_AUDIT, audit_params


class PostgresDialect(Dialect):
    mark = "%s"
    true = "TRUE"
    false = "FALSE"
    batch = 0
    pin = ""

    def flag(self, column: str, on: bool = True) -> str:
        return column if on else f"NOT {column}"

    def in_list(self, column: str, values: Sequence[object]) -> tuple[str, list[object]]:
        return f"{column} = ANY(%s)", [list(values)]

    def in_partitions(self, partitions: Sequence[Partition]) -> tuple[str, list[object]]:
        # The partitions as a filter, not a join: the area clause already lets the planner pick an
        # index, and as a join the planner reads the tsvector index once per partition. No scope
        # holds a "|", so "scope|namespace" names one partition.
        return "(e.scope || '|' || e.namespace) = ANY(%s::text[])", [[f"{p.scope}|{p.namespace}" for p in partitions]]

    def boolean(self, value: bool) -> object:
        return value

    def tags_all(self, column: str, tags: Sequence[str]) -> tuple[str, list[object]]:
        return f"{column} @> %s::text[]", [list(tags)]  # every one of the tags

    def tags_of(self, value: Any) -> list[str]:
        return list(value)

    def reader_clause(self, alias: str, reader: str) -> tuple[str, list[object]]:
        # A read list is text[], NULL for none.
        return (f"({alias}read_agents IS NULL OR {alias}owner_agent_id = %s OR %s = ANY({alias}read_agents))",
                [reader, reader])


POSTGRES = PostgresDialect(rows, INSERT_AUDIT, audit_params)
