"""The port of issued tokens and their revocation: what `agent-memory token issue|list|revoke` and
the console's sign-in write, and what every HTTP request reads before anything runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agent_memory.core.model.models import AuditEvent


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """What is kept of an issued token: its id and claims, never its text."""

    token_id: str
    agent_id: str
    team: str
    system_type: str
    skills: tuple[str, ...]
    operator: bool
    kind: str  # "cli" (`agent-memory token issue`) or "console" (a console sign-in session)
    issued_at: str
    expires_at: str
    revoked_at: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {"id": self.token_id, "agent_id": self.agent_id, "team": self.team, "system_type": self.system_type,
                "skills": list(self.skills), "operator": self.operator, "kind": self.kind,
                "issued_at": self.issued_at, "expires_at": self.expires_at, "revoked_at": self.revoked_at}


@dataclass(frozen=True, slots=True)
class AgentCutoff:
    """Every token of `agent_id` minted at or before `revoked_through_ms` is revoked (ids or not,
    recorded or not)."""

    agent_id: str
    revoked_through_ms: int
    revoked_at: str  # the same moment, as a timestamp


@dataclass(frozen=True, slots=True)
class TokenStanding:
    """What the store says of one token: its own revocation time (None: not revoked, or not
    recorded here) and its agent's cutoff (None: none)."""

    revoked_at: str | None
    agent_revoked_through_ms: int | None


class TokenRegistry(Protocol):
    async def record(self, token: TokenRecord, event: AuditEvent, *, forget_expired_before: str) -> None:
        """Keep `token` and audit `event`, in one transaction; forget tokens that expired before
        `forget_expired_before`."""
        ...

    async def tokens(self, agent_id: str | None = None) -> list[TokenRecord]:
        """The recorded tokens (of `agent_id` only, when given), oldest first."""
        ...

    async def cutoffs(self) -> list[AgentCutoff]:
        """Every agent's cutoff, by agent id."""
        ...

    async def revoke(self, token_id: str, at: str, event: AuditEvent) -> TokenRecord | None:
        """Mark the token revoked at `at` (a token already revoked keeps its first time) and audit
        `event`, in one transaction; None (and nothing audited) when no such token is recorded."""
        ...

    async def revoke_agent(self, cutoff: AgentCutoff, event: AuditEvent) -> int:
        """Raise the agent's cutoff to `cutoff` (never lower it), mark its recorded tokens issued
        by then revoked, and audit `event`, in one transaction. Returns how many were newly marked."""
        ...

    async def standing(self, token_id: str | None, agent_id: str) -> TokenStanding:
        """One read, by primary keys: the token's revocation and its agent's cutoff."""
        ...
