"""Session turns, reflection marks and earlier reflections on SQLite (implements `SessionStore`;
the queries are `agent_memory.storage.frame.sessions`). A turn's position is its rowid; a mark
also passes over turns edited since it was set (a rowid can be reused when the newest entry is
deleted)."""

from __future__ import annotations

from agent_memory.storage.frame.sessions import SessionColumns, SessionFrame
from agent_memory.storage.sqlite.dialect import SQLITE
from agent_memory.storage.sqlite.entries import SqliteEntryRepository


class SqliteSessionStore(SqliteEntryRepository, SessionFrame):
    dialect = SQLITE
    columns = SessionColumns(
        position="rowid", after="(rowid > ? OR updated_at > ?)", after_params=2, order="created_at, rowid",
        mark="last_rowid",
        kept="kept_rowid",
        unreflected=("MAX(e.rowid) > COALESCE(MAX(m.last_rowid), 0) "
                     "OR MAX(e.updated_at) > COALESCE(MAX(m.reflected_at), '')"),
        newest="MAX(e.rowid)")
