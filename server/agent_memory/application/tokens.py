"""Bearer tokens, for every caller that issues or checks one: `agent-memory token
issue|verify|list|revoke`, the HTTP transport checking each request, and the memory console's
sign-in and its requests.

A token is signed with the server's secret (`core/access/tokens.py`); the store keeps every issued
token's record (its id and claims, never its text) and the revocations, which every check reads
(`core/access/revocation.py`), so a revocation holds on the next request of every server of the store."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from agent_memory.core.access.revocation import check_not_revoked, register, revoke_agent, revoke_token
from agent_memory.core.access.tokens import TokenClaims, mint, verify_token
from agent_memory.core.model.commands import Call
from agent_memory.core.model.models import Caller
from agent_memory.core.ports.tokens import AgentCutoff, TokenRecord, TokenRegistry


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class Issued:
    token: str  # the text, shown once; the store keeps only its record
    claims: TokenClaims
    record: TokenRecord


@dataclass(frozen=True, slots=True)
class Listing:
    records: list[TokenRecord]  # every recorded token (of one agent, when asked), expired ones for a while
    cutoffs: list[AgentCutoff]  # agents whose every token issued through a moment is revoked


class Tokens:
    def __init__(self, registry: TokenRegistry, secret: bytes, clock_ms: Callable[[], int] = now_ms) -> None:
        self._registry = registry
        self._secret = secret
        self._clock_ms = clock_ms

    async def issue(self, caller: Caller, *, ttl_seconds: int, kind: str, call: Call | None = None) -> Issued:
        """A new token for `caller`, recorded in the store as `kind` (audited as `token_issue`: by
        `call`, else by the command line).

        Raises: ValueError for a ttl outside 1 second..366 days (nothing is recorded)."""
        at = self._clock_ms()
        token, claims = mint(caller, self._secret, now_ms=at, ttl_seconds=ttl_seconds)
        record = await register(self._registry, claims, kind, now_ms=at, call=call)
        return Issued(token, claims, record)

    async def verify(self, token: str) -> TokenClaims:
        """The claims of a token this server's secret signed, unexpired and not revoked.

        Raises:
            TokenError: why the token is refused (never echoing it).
            RevocationUnknown: the store did not say whether it is revoked."""
        claims = verify_token(token, self._secret, now=self._clock_ms() // 1000)
        await self.not_revoked(claims)
        return claims

    async def not_revoked(self, claims: TokenClaims) -> None:
        """For claims whose signature was checked already (the HTTP transport does that before the
        store is open, so a bad token gets 401 even then).

        Raises:
            TokenError: the token is revoked.
            RevocationUnknown: the store did not answer."""
        await check_not_revoked(self._registry, claims)

    async def listed(self, agent_id: str | None = None) -> Listing:
        return Listing(await self._registry.tokens(agent_id), await self._registry.cutoffs())

    async def revoke(self, token_id: str) -> TokenRecord | None:
        """Revoke one recorded token; None when no such token is recorded."""
        return await revoke_token(self._registry, token_id, now_ms=self._clock_ms())

    async def revoke_agent(self, agent_id: str) -> int:
        """Revoke every token of `agent_id` issued until now, recorded or not; returns how many
        recorded tokens were newly revoked."""
        return await revoke_agent(self._registry, agent_id, now_ms=self._clock_ms())
