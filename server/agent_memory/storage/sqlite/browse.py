"""The memory console's browse query on SQLite (`agent_memory.storage.frame.browse`)."""

from __future__ import annotations

from agent_memory.storage.frame.browse import BrowseFrame
from agent_memory.storage.sqlite.dialect import SQLITE
from agent_memory.storage.sqlite.entries import build_list_sql


class SqliteBrowseStore(BrowseFrame):
    dialect = SQLITE
    list_sql = staticmethod(build_list_sql)
