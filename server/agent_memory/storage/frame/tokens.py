"""Issued tokens and their revocation (the `TokenRegistry` port), for either store: `tokens` (id
and claims of each token `agent-memory token issue` or a console sign-in minted, never its text)
and `token_cutoffs` (per agent: every token minted until then is revoked). Each store creates the
tables its own way (SQLite's `m013_tokens`, PostgreSQL's `m011_tokens`); on PostgreSQL they are
shared by every server of the database, so a revocation holds on the next request on each."""

from __future__ import annotations

from typing import Any

from agent_memory.core.model.models import AuditEvent
from agent_memory.core.ports import AgentCutoff, TokenRecord, TokenStanding
from agent_memory.storage.frame.dialect import Dialect

COLUMNS = "id, agent_id, team, system_type, skills, operator, kind, issued_at, expires_at, revoked_at"


def _record(row: tuple[Any, ...]) -> TokenRecord:
    token_id, agent_id, team, system_type, skills, operator, kind, issued_at, expires_at, revoked_at = row
    return TokenRecord(token_id, agent_id, team, system_type, tuple(s for s in skills.split(",") if s),
                       bool(operator), kind, issued_at, expires_at, revoked_at)


class TokenFrame:
    """`db`: the store's database (`read` and `transact` run work on a connection's thread)."""

    def __init__(self, db: Any, dialect: Dialect) -> None:
        self._db = db
        self._dialect = dialect
        self._q = dialect.mark

    async def record(self, token: TokenRecord, event: AuditEvent, *, forget_expired_before: str) -> None:
        q, dialect = self._q, self._dialect

        def work(conn: Any) -> None:
            conn.execute(f"DELETE FROM tokens WHERE expires_at < {q}", (forget_expired_before,))
            conn.execute(f"INSERT INTO tokens ({COLUMNS}) VALUES ({', '.join([q] * 10)})",
                         (token.token_id, token.agent_id, token.team, token.system_type, ",".join(token.skills),
                          dialect.boolean(token.operator), token.kind, token.issued_at, token.expires_at,
                          token.revoked_at))
            conn.execute(dialect.insert_audit, dialect.audit_params(event))

        await self._db.transact(work)

    async def tokens(self, agent_id: str | None = None) -> list[TokenRecord]:
        where, params = (f"WHERE agent_id = {self._q} ", [agent_id]) if agent_id is not None else ("", [])
        rows = await self._db.read(lambda conn: conn.execute(
            f"SELECT {COLUMNS} FROM tokens {where}ORDER BY issued_at, id", params).fetchall())
        return [_record(tuple(row)) for row in rows]

    async def cutoffs(self) -> list[AgentCutoff]:
        rows = await self._db.read(lambda conn: conn.execute(
            "SELECT agent_id, revoked_through_ms, revoked_at FROM token_cutoffs ORDER BY agent_id").fetchall())
        return [AgentCutoff(agent_id, int(ms), at) for agent_id, ms, at in rows]

    async def revoke(self, token_id: str, at: str, event: AuditEvent) -> TokenRecord | None:
        q, dialect = self._q, self._dialect

        def work(conn: Any) -> TokenRecord | None:
            conn.execute(f"UPDATE tokens SET revoked_at = {q} WHERE id = {q} AND revoked_at IS NULL", (at, token_id))
            row = conn.execute(f"SELECT {COLUMNS} FROM tokens WHERE id = {q}", (token_id,)).fetchone()
            if row is None:
                return None
            conn.execute(dialect.insert_audit, dialect.audit_params(event))
            return _record(tuple(row))

        return await self._db.transact(work)

    async def revoke_agent(self, cutoff: AgentCutoff, event: AuditEvent) -> int:
        q, dialect = self._q, self._dialect

        def work(conn: Any) -> int:
            conn.execute(
                f"INSERT INTO token_cutoffs (agent_id, revoked_through_ms, revoked_at) VALUES ({q}, {q}, {q}) "
                "ON CONFLICT (agent_id) DO UPDATE SET revoked_through_ms = excluded.revoked_through_ms, "
                "revoked_at = excluded.revoked_at "
                "WHERE excluded.revoked_through_ms > token_cutoffs.revoked_through_ms",
                (cutoff.agent_id, cutoff.revoked_through_ms, cutoff.revoked_at))
            marked = conn.execute(f"UPDATE tokens SET revoked_at = {q} WHERE agent_id = {q} AND revoked_at IS NULL "
                                  f"AND issued_at <= {q}", (cutoff.revoked_at, cutoff.agent_id, cutoff.revoked_at))
            conn.execute(dialect.insert_audit, dialect.audit_params(event))
            return int(marked.rowcount)

        return await self._db.transact(work)

    async def standing(self, token_id: str | None, agent_id: str) -> TokenStanding:
        q = self._q
        row = await self._db.read(lambda conn: conn.execute(
            f"SELECT (SELECT revoked_at FROM tokens WHERE id = {q}), "
            f"(SELECT revoked_through_ms FROM token_cutoffs WHERE agent_id = {q})", (token_id, agent_id)).fetchone())
        assert row is not None  # a SELECT without FROM always answers one row
        revoked_at, through = row
        return TokenStanding(revoked_at, None if through is None else int(through))
