"""Issued tokens and their revocation on SQLite (the `TokenRegistry` port): the `tokens` table (id
and claims of each token `agent-memory token issue` or a console sign-in minted, never its text) and
`token_cutoffs` (per agent: every token minted until then is revoked)."""

from __future__ import annotations

import sqlite3

from agent_memory.core.models import AuditEvent
from agent_memory.core.ports import AgentCutoff, TokenRecord, TokenStanding
from agent_memory.storage.sqlite.audit import INSERT_AUDIT, audit_params
from agent_memory.storage.sqlite.database import Database

COLUMNS = "id, agent_id, team, system_type, skills, operator, kind, issued_at, expires_at, revoked_at"


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


def _record(row: tuple) -> TokenRecord:  # type: ignore[type-arg]
    token_id, agent_id, team, system_type, skills, operator, kind, issued_at, expires_at, revoked_at = row
    return TokenRecord(token_id, agent_id, team, system_type, tuple(s for s in skills.split(",") if s),
                       bool(operator), kind, issued_at, expires_at, revoked_at)


class SqliteTokenRegistry:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(self, token: TokenRecord, event: AuditEvent, *, forget_expired_before: str) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM tokens WHERE expires_at < ?", (forget_expired_before,))
            conn.execute(f"INSERT INTO tokens ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (token.token_id, token.agent_id, token.team, token.system_type, ",".join(token.skills),
                          int(token.operator), token.kind, token.issued_at, token.expires_at, token.revoked_at))
            conn.execute(INSERT_AUDIT, audit_params(event))

        await self._db.transact(work)

    async def tokens(self, agent_id: str | None = None) -> list[TokenRecord]:
        where, params = ("WHERE agent_id = ? ", [agent_id]) if agent_id is not None else ("", [])
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(f"SELECT {COLUMNS} FROM tokens {where}ORDER BY issued_at, id", params)
        return [_record(tuple(row)) for row in rows]

    async def cutoffs(self) -> list[AgentCutoff]:
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(
                "SELECT agent_id, revoked_through_ms, revoked_at FROM token_cutoffs ORDER BY agent_id")
        return [AgentCutoff(agent_id, int(ms), at) for agent_id, ms, at in rows]

    async def revoke(self, token_id: str, at: str, event: AuditEvent) -> TokenRecord | None:
        def work(conn: sqlite3.Connection) -> TokenRecord | None:
            conn.execute("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (at, token_id))
            row = conn.execute(f"SELECT {COLUMNS} FROM tokens WHERE id = ?", (token_id,)).fetchone()
            if row is None:
                return None
            conn.execute(INSERT_AUDIT, audit_params(event))
            return _record(tuple(row))

        return await self._db.transact(work)

    async def revoke_agent(self, cutoff: AgentCutoff, event: AuditEvent) -> int:
        def work(conn: sqlite3.Connection) -> int:
            conn.execute(
                "INSERT INTO token_cutoffs (agent_id, revoked_through_ms, revoked_at) VALUES (?, ?, ?) "
                "ON CONFLICT (agent_id) DO UPDATE SET revoked_through_ms = excluded.revoked_through_ms, "
                "revoked_at = excluded.revoked_at "
                "WHERE excluded.revoked_through_ms > token_cutoffs.revoked_through_ms",
                (cutoff.agent_id, cutoff.revoked_through_ms, cutoff.revoked_at))
            marked = conn.execute("UPDATE tokens SET revoked_at = ? WHERE agent_id = ? AND revoked_at IS NULL "
                                  "AND issued_at <= ?", (cutoff.revoked_at, cutoff.agent_id, cutoff.revoked_at))
            conn.execute(INSERT_AUDIT, audit_params(event))
            return int(marked.rowcount)

        return await self._db.transact(work)

    async def standing(self, token_id: str | None, agent_id: str) -> TokenStanding:
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(
                "SELECT (SELECT revoked_at FROM tokens WHERE id = ?), "
                "(SELECT revoked_through_ms FROM token_cutoffs WHERE agent_id = ?)", (token_id, agent_id))
        revoked_at, through = next(iter(rows))
        return TokenStanding(revoked_at, None if through is None else int(through))
