"""Issued tokens and their revocation on SQLite (the `TokenRegistry` port): its tables, `tokens` and
`token_cutoffs`; the queries are `agent_memory.storage.frame.tokens`, which says what they hold."""

from __future__ import annotations

import sqlite3

from agent_memory.storage.frame.tokens import TokenFrame
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.dialect import SQLITE


def m013_tokens(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE tokens (
            id TEXT PRIMARY KEY,
            agent_id TEXT NOT NULL,
            team TEXT NOT NULL,
            system_type TEXT NOT NULL,
            skills TEXT NOT NULL,
            operator INTEGER NOT NULL,
            kind TEXT NOT NULL,
            issued_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            revoked_at TEXT
        ) WITHOUT ROWID
        """
    )
    conn.execute("CREATE INDEX tokens_by_agent ON tokens (agent_id, issued_at)")
    conn.execute("CREATE TABLE token_cutoffs (agent_id TEXT PRIMARY KEY, revoked_through_ms INTEGER NOT NULL, "
                 "revoked_at TEXT NOT NULL) WITHOUT ROWID")


class SqliteTokenRegistry(TokenFrame):
    def __init__(self, db: Database) -> None:
        super().__init__(db, SQLITE)
