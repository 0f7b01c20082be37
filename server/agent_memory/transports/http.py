"""Streamable HTTP: bearer-token authentication in front of the MCP endpoint."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Protocol

import structlog
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_memory.core.access.revocation import RevocationUnknown
from agent_memory.core.access.tokens import TokenClaims, TokenError, verify_token
from agent_memory.core.model.models import Caller
from agent_memory.tools.identity import CALLER_STATE_KEY
from agent_memory.transports.http_public import answer_public, resource_metadata_url

if TYPE_CHECKING:
    from agent_memory.bootstrap import App


log = structlog.get_logger("agent_memory.http")


class BearerAuth:
    """ASGI middleware: every HTTP request but `/healthz` and `/.well-known/` (http_public.py) needs
    `Authorization: Bearer <token>` signed with the server's secret. A missing, malformed, forged
    or expired token gets 401 (pointing at the resource metadata, with the reason) and nothing runs;
    a valid one puts its caller in `scope["state"]`, where the tool handlers read it.

    It also sets the ASGI `user` the MCP SDK binds sessions to: an MCP session (`Mcp-Session-Id`,
    2025-11-25 clients) belongs to the identity that opened it, and a request presenting another
    identity's session id (to post into it, open its GET stream or DELETE it) gets the SDK's
    answer for an unknown session (404), so nothing runs and nothing says the session exists.

    A token that verifies is then looked up in the store's revocation list (one read by primary
    keys, `core/access/revocation.py`): a revoked one gets 401 "token revoked"; when the store cannot
    answer (or the app is not open yet), 503 and nothing runs."""

    def __init__(self, app: ASGIApp, secret: bytes, slot: OpenedApp) -> None:
        self._app = app
        self._secret = secret
        self._slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        if await answer_public(scope, send):  # /healthz and /.well-known/: no token, no data
            return
        try:
            claims = self._authenticate(scope)
            opened = self._slot.app
            if opened is None:
                raise RevocationUnknown("the server is starting or stopping; retry")
            await opened.tokens(self._secret).not_revoked(claims)
        except TokenError as error:
            log.warning("http_unauthorized", reason=str(error), path=scope.get("path"),
                        client=(scope.get("client") or ("?",))[0])
            await _unauthorized(send, str(error), scope)
            return
        except RevocationUnknown as error:
            log.warning("http_revocation_unknown", reason=str(error), cause=repr(error.__cause__)[:300])
            await _unavailable(send, str(error))
            return
        caller = claims.caller
        scope.setdefault("state", {})[CALLER_STATE_KEY] = caller
        scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=principal(caller),
                                                      scopes=sorted(s.value for s in caller.skills)))
        await self._app(scope, receive, send)

    def _authenticate(self, scope: Scope) -> TokenClaims:
        headers = dict(scope.get("headers") or [])
        header = headers.get(b"authorization", b"").decode("latin-1").strip()
        if not header:
            raise TokenError("missing bearer token")
        kind, _, token = header.partition(" ")
        if kind.lower() != "bearer" or not token.strip():
            raise TokenError("malformed Authorization header; expected 'Bearer <token>'")
        claims = verify_token(token.strip(), self._secret, now=int(time.time()))
        if claims.caller.operator:
            raise TokenError("an operator token is for the memory console (/console/), not for MCP")
        return claims


class OpenedApp(Protocol):
    """Where the running server's app is found once the MCP lifespan opened it (`AppSlot`)."""

    @property
    def app(self) -> App | None: ...


def principal(caller: Caller) -> str:
    """The identity a session is bound to: every claim but the token's times (a renewed token for
    the same identity keeps its sessions)."""
    skills = ",".join(sorted(skill.value for skill in caller.skills))
    return f"{caller.agent_id}@{caller.team}/{caller.system_type.value}[{skills}]"


async def _unavailable(send: Send, reason: str) -> None:
    body = json.dumps({"error": "temporarily_unavailable", "error_description": reason}).encode()
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), (b"retry-after", b"1")]})
    await send({"type": "http.response.body", "body": body})


async def _unauthorized(send: Send, reason: str, scope: Scope) -> None:
    """401 with an RFC 6750 challenge naming the RFC 9728 metadata (which names no OAuth server)
    and the real reason."""
    body = json.dumps({"error": "invalid_token", "error_description": reason}).encode()
    quoted = reason.replace("\\", "/").replace('"', "'")
    challenge = (f'Bearer resource_metadata="{resource_metadata_url(scope)}", error="invalid_token", '
                 f'error_description="{quoted}"')
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", challenge.encode("latin-1", "replace")),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})

