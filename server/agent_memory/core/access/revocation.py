"""Token ids, records and revocation: what `agent-memory token issue|list|revoke` and the console's
sign-in keep in the store, and the check every HTTP request makes before anything runs.

A token is revoked when its own record says so (`token revoke ID`), or when its agent has a cutoff
(`token revoke --agent A`) at or after the millisecond it was minted; a token without an id (minted
before ids existed) counts as minted at the start of its `iat` second. The check reads the shared
store on every request, so a revocation holds on the next request on every server of that store."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_memory.core.access.tokens import TokenClaims, TokenError
from agent_memory.core.model.audit import audit_event
from agent_memory.core.model.clock import format_ts
from agent_memory.core.model.commands import Call
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.model.models import AuditEvent, SystemType
from agent_memory.core.ports.tokens import AgentCutoff, TokenRecord, TokenRegistry, TokenStanding

REVOKED = "token revoked"
FORGET_EXPIRED_AFTER_SECONDS = 30 * 24 * 3600  # expired tokens stay listed this long, then are forgotten
CLI_TOOL = "token"  # the `tool` of audit rows written by `agent-memory token ...`


class RevocationUnknown(Exception):
    """The store could not be asked whether a token is revoked (the request is refused, 503)."""


def ms_timestamp(ms: int) -> str:
    return format_ts(datetime.fromtimestamp(ms / 1000, UTC))


def is_revoked(claims: TokenClaims, standing: TokenStanding) -> bool:
    if standing.revoked_at is not None:
        return True
    cutoff = standing.agent_revoked_through_ms
    return cutoff is not None and claims.issued_ms <= cutoff


async def check_not_revoked(registry: TokenRegistry, claims: TokenClaims) -> None:
    """Raises:
        TokenError: the token is revoked ("token revoked").
        RevocationUnknown: the store did not answer."""
    try:
        standing = await registry.standing(claims.token_id, claims.caller.agent_id)
    except Exception as exc:  # the adapter's driver errors: the caller answers 503, never "valid"
        raise RevocationUnknown("cannot read the token revocation list; retry") from exc
    if is_revoked(claims, standing):
        raise TokenError(REVOKED)


def token_record(claims: TokenClaims, kind: str) -> TokenRecord:
    if claims.token_id is None:
        raise ValueError("only a token with an id is recorded")
    caller = claims.caller
    return TokenRecord(token_id=claims.token_id, agent_id=caller.agent_id, team=caller.team,
                       system_type=caller.system_type.value, skills=tuple(sorted(s.value for s in caller.skills)),
                       operator=caller.operator, kind=kind, issued_at=ms_timestamp(claims.issued_ms),
                       expires_at=ms_timestamp(claims.expires_at * 1000))


def _cli_event(action: str, at: str, **details: object) -> AuditEvent:
    """An audit row written by `agent-memory token ...` (who: the operator at the command line)."""
    return AuditEvent(at=at, request_id=new_request_id(), agent_id="operator", team="",
                      system_type=SystemType.SYS5.value, tool=CLI_TOOL, action=action, scope=None, namespace=None,
                      entry_id=None, outcome="ok", details=dict(details))


async def register(registry: TokenRegistry, claims: TokenClaims, kind: str, *, now_ms: int,
                   call: Call | None = None) -> TokenRecord:
    """Record a newly minted token (audited as `token_issue`: by `call`, else by the command line)."""
    record = token_record(claims, kind)
    at = ms_timestamp(now_ms)
    details = {"token_id": record.token_id, "subject": record.agent_id, "token_team": record.team,
               "kind": kind, "expires_at": record.expires_at}
    event = (audit_event(call, "token_issue", None, None, None, "ok", at, **details) if call is not None
             else _cli_event("token_issue", at, **details))
    await registry.record(record, event, forget_expired_before=ms_timestamp(
        now_ms - FORGET_EXPIRED_AFTER_SECONDS * 1000))
    return record


async def revoke_token(registry: TokenRegistry, token_id: str, *, now_ms: int) -> TokenRecord | None:
    """Revoke one recorded token (audited as `token_revoke`); None when no such token is recorded."""
    at = ms_timestamp(now_ms)
    return await registry.revoke(token_id, at, _cli_event("token_revoke", at, token_id=token_id))


async def revoke_agent(registry: TokenRegistry, agent_id: str, *, now_ms: int) -> int:
    """Revoke every token of `agent_id` minted until now, recorded or not, with an id or not
    (audited as `token_revoke`); returns how many recorded tokens were newly revoked."""
    at = ms_timestamp(now_ms)
    return await registry.revoke_agent(AgentCutoff(agent_id, now_ms, at),
                                       _cli_event("token_revoke", at, subject=agent_id, revoked_through=at))
