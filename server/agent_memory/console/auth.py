"""Signing in to the console: the HTTP bearer tokens, checked the same way as for /mcp (signature,
expiry, then the store's revocation list). An operator token is audited on every use (one `console`
row per request, before anything runs)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from agent_memory.application.tokens import Tokens
from agent_memory.core.access.tokens import TokenClaims, TokenError
from agent_memory.core.model.audit import audit_event
from agent_memory.core.model.clock import format_ts, utc_now
from agent_memory.core.model.commands import Call
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.model.models import Caller
from agent_memory.core.ports import AuditSink

TOOL = "console"  # the `tool` column of audit rows written for console requests


@dataclass(frozen=True, slots=True)
class SignedIn:
    claims: TokenClaims
    request_id: str

    @property
    def caller(self) -> Caller:
        return self.claims.caller

    def call(self, action: str | None = None) -> Call:
        return Call(self.caller, self.request_id, TOOL, action)


def bearer(request: Request) -> str:
    """Raises: TokenError when the header is missing or not `Bearer <token>`."""
    header = request.headers.get("authorization", "").strip()
    if not header:
        raise TokenError("missing bearer token")
    kind, _, token = header.partition(" ")
    if kind.lower() != "bearer" or not token.strip():
        raise TokenError("malformed Authorization header; expected 'Bearer <token>'")
    return token.strip()


async def sign_in(request: Request, tokens: Tokens, audit: AuditSink) -> SignedIn:
    """The caller of a console API request; an operator's request is audited here.

    Raises:
        TokenError: no valid token (or a revoked one).
        RevocationUnknown: the store did not say whether the token is revoked.
    """
    claims = await tokens.verify(bearer(request))
    signed = SignedIn(claims, new_request_id())
    if claims.caller.operator:
        await audit.record(audit_event(signed.call("operator_access"), "operator_access", None, None, None, "ok",
                                       format_ts(utc_now()), method=request.method, path=request.url.path))
    return signed
