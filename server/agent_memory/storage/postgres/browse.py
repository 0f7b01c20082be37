"""The memory console's browse query on PostgreSQL (`agent_memory.storage.frame.browse`)."""

from __future__ import annotations

from agent_memory.storage.frame.browse import BrowseFrame
from agent_memory.storage.postgres.dialect import POSTGRES


class PostgresBrowseStore(BrowseFrame):
    dialect = POSTGRES
