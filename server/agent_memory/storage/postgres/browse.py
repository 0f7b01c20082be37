"""The memory console's browse query on PostgreSQL (`agent_memory.storage.frame.browse`)."""

from __future__ import annotations

from agent_memory.storage.frame.browse import BrowseFrame
from agent_memory.storage.postgres.dialect import POSTGRES
from agent_memory.storage.postgres.entries import build_list_sql


class PostgresBrowseStore(BrowseFrame):
    dialect = POSTGRES
    list_sql = staticmethod(build_list_sql)
