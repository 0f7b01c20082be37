"""Issued tokens and their revocation on PostgreSQL (the `TokenRegistry` port): its tables, `tokens`
and `token_cutoffs`, shared by every server of the database; the queries are
`agent_memory.storage.frame.tokens`."""

from __future__ import annotations

import psycopg

from agent_memory.storage.frame.tokens import TokenFrame
from agent_memory.storage.postgres.database import PostgresDatabase
from agent_memory.storage.postgres.dialect import POSTGRES


def m011_tokens(conn: psycopg.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE tokens (
            id TEXT COLLATE "C" PRIMARY KEY,
            agent_id TEXT COLLATE "C" NOT NULL,
            team TEXT COLLATE "C" NOT NULL,
            system_type TEXT NOT NULL,
            skills TEXT NOT NULL,
            operator BOOLEAN NOT NULL,
            kind TEXT NOT NULL,
            issued_at TEXT COLLATE "C" NOT NULL,
            expires_at TEXT COLLATE "C" NOT NULL,
            revoked_at TEXT COLLATE "C"
        )
        """
    )
    conn.execute("CREATE INDEX tokens_by_agent ON tokens (agent_id, issued_at)")
    conn.execute('CREATE TABLE token_cutoffs (agent_id TEXT COLLATE "C" PRIMARY KEY, '
                 'revoked_through_ms BIGINT NOT NULL, revoked_at TEXT COLLATE "C" NOT NULL)')


class PostgresTokenRegistry(TokenFrame):
    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__(db, POSTGRES)
