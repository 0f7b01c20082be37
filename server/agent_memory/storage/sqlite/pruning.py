"""What pruning and erase delete on SQLite (implements `PruneStore`; the queries are
`agent_memory.storage.frame.pruning`)."""

from __future__ import annotations

from agent_memory.storage.frame.pruning import PruneFrame
from agent_memory.storage.sqlite.dialect import SQLITE
from agent_memory.storage.sqlite.entries import SqliteEntryRepository


class SqlitePruneStore(SqliteEntryRepository, PruneFrame):
    dialect = SQLITE
    kept = "k.kept_rowid >= entries.rowid"
