"""The memory console's browse query on SQLite (`agent_memory.storage.frame.browse`)."""

from __future__ import annotations

from agent_memory.storage.frame.browse import BrowseFrame
from agent_memory.storage.sqlite.dialect import SQLITE


class SqliteBrowseStore(BrowseFrame):
    dialect = SQLITE
