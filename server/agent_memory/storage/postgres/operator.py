"""What operator commands and inspection read from PostgreSQL (the `OperatorStore` port; the
queries are `agent_memory.storage.frame.operator`): entries in `seq` order, and the database's size."""

from __future__ import annotations

import psycopg

from agent_memory.storage.frame.operator import OperatorFrame
from agent_memory.storage.postgres.dialect import POSTGRES


class PostgresOperatorStore(OperatorFrame):
    dialect = POSTGRES
    position = "seq"
    flag_counts = "COUNT(*) FILTER (WHERE compacted), COUNT(*) FILTER (WHERE conflict)"

    async def storage_bytes(self) -> int | None:
        """The whole database's size (None when this role may not ask for it)."""
        try:
            return await self._count("SELECT pg_database_size(current_database())")
        except psycopg.errors.InsufficientPrivilege:
            return None
