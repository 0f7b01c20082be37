"""Issued tokens and their revocation on PostgreSQL (the `TokenRegistry` port, as
`agent_memory.storage.sqlite.tokens`): `tokens` and `token_cutoffs`, shared by every server of the
database, so a revocation holds on the next request on each of them."""

from __future__ import annotations

import psycopg

from agent_memory.core.models import AuditEvent
from agent_memory.core.ports import AgentCutoff, TokenRecord, TokenStanding
from agent_memory.storage.postgres.audit import INSERT_AUDIT, audit_params
from agent_memory.storage.postgres.database import PostgresDatabase

COLUMNS = "id, agent_id, team, system_type, skills, operator, kind, issued_at, expires_at, revoked_at"


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


def _record(row: tuple) -> TokenRecord:  # type: ignore[type-arg]
    token_id, agent_id, team, system_type, skills, operator, kind, issued_at, expires_at, revoked_at = row
    return TokenRecord(token_id, agent_id, team, system_type, tuple(s for s in skills.split(",") if s),
                       bool(operator), kind, issued_at, expires_at, revoked_at)


class PostgresTokenRegistry:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def record(self, token: TokenRecord, event: AuditEvent, *, forget_expired_before: str) -> None:
        def work(conn: psycopg.Connection) -> None:
            conn.execute("DELETE FROM tokens WHERE expires_at < %s", (forget_expired_before,))
            conn.execute(f"INSERT INTO tokens ({COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                         (token.token_id, token.agent_id, token.team, token.system_type, ",".join(token.skills),
                          token.operator, token.kind, token.issued_at, token.expires_at, token.revoked_at))
            conn.execute(INSERT_AUDIT, audit_params(event))

        await self._db.transact(work)

    async def tokens(self, agent_id: str | None = None) -> list[TokenRecord]:
        where, params = ("WHERE agent_id = %s ", [agent_id]) if agent_id is not None else ("", [])
        rows = await self._db.read(lambda conn: conn.execute(
            f"SELECT {COLUMNS} FROM tokens {where}ORDER BY issued_at, id", params).fetchall())
        return [_record(tuple(row)) for row in rows]

    async def cutoffs(self) -> list[AgentCutoff]:
        rows = await self._db.read(lambda conn: conn.execute(
            "SELECT agent_id, revoked_through_ms, revoked_at FROM token_cutoffs ORDER BY agent_id").fetchall())
        return [AgentCutoff(agent_id, int(ms), at) for agent_id, ms, at in rows]

    async def revoke(self, token_id: str, at: str, event: AuditEvent) -> TokenRecord | None:
        def work(conn: psycopg.Connection) -> TokenRecord | None:
            conn.execute("UPDATE tokens SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL", (at, token_id))
            row = conn.execute(f"SELECT {COLUMNS} FROM tokens WHERE id = %s", (token_id,)).fetchone()
            if row is None:
                return None
            conn.execute(INSERT_AUDIT, audit_params(event))
            return _record(tuple(row))

        return await self._db.transact(work)

    async def revoke_agent(self, cutoff: AgentCutoff, event: AuditEvent) -> int:
        def work(conn: psycopg.Connection) -> int:
            conn.execute(
                "INSERT INTO token_cutoffs (agent_id, revoked_through_ms, revoked_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (agent_id) DO UPDATE SET revoked_through_ms = excluded.revoked_through_ms, "
                "revoked_at = excluded.revoked_at "
                "WHERE excluded.revoked_through_ms > token_cutoffs.revoked_through_ms",
                (cutoff.agent_id, cutoff.revoked_through_ms, cutoff.revoked_at))
            marked = conn.execute("UPDATE tokens SET revoked_at = %s WHERE agent_id = %s AND revoked_at IS NULL "
                                  "AND issued_at <= %s", (cutoff.revoked_at, cutoff.agent_id, cutoff.revoked_at))
            conn.execute(INSERT_AUDIT, audit_params(event))
            return int(marked.rowcount)

        return await self._db.transact(work)

    async def standing(self, token_id: str | None, agent_id: str) -> TokenStanding:
        row = await self._db.read(lambda conn: conn.execute(
            "SELECT (SELECT revoked_at FROM tokens WHERE id = %s), "
            "(SELECT revoked_through_ms FROM token_cutoffs WHERE agent_id = %s)", (token_id, agent_id)).fetchone())
        assert row is not None  # a SELECT without FROM always answers one row
        revoked_at, through = row
        return TokenStanding(revoked_at, None if through is None else int(through))
