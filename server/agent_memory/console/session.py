"""Signing in to `agent-memory console` without a long-lived token in any URL or command line.

The console process makes a one-time sign-in code (random, single use, valid `console_code_seconds`,
kept in this process's memory as a SHA-256 hash only) and prints a URL carrying it in the fragment.
The page POSTs the code to /console/api/session and gets back an operator session token (12 hours,
with an id: listed by `agent-memory token list`, revocable by `token revoke`), which it keeps in
a JavaScript variable only. A code that was used, has expired, or was never made gets 401 JSON:
whatever the browser's history kept of the URL is worthless by then. `serve --http` makes no codes,
so there every code is refused."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_memory.contracts.errors import internal_error
from agent_memory.core.model.commands import Call
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.model.models import ALL_SKILLS, Caller, SystemType

SESSION_TTL_SECONDS = 12 * 3600
MAX_BODY_BYTES = 4096
KIND = "console"  # the `kind` of the recorded session tokens

log = structlog.get_logger("agent_memory.console")


class SignInCodes:
    """One-time codes: each redeems once, until it expires. Thread-safe (the console's terminal
    thread makes codes while the server redeems them)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._expiry: dict[bytes, float] = {}  # sha256(code) -> when it stops being valid
        self._lock = threading.Lock()

    def issue(self, ttl_seconds: float) -> str:
        code = secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            self._expiry = {key: until for key, until in self._expiry.items() if until > now}
            self._expiry[_digest(code)] = now + ttl_seconds
        return code

    def redeem(self, code: str) -> bool:
        """True once for a code made here and not yet expired; False ever after."""
        with self._lock:
            until = self._expiry.pop(_digest(code), None)
        return until is not None and self._clock() < until


def _digest(code: str) -> bytes:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).digest()




def console_operator(launcher: Caller) -> Caller:
    """The identity of a console sign-in: the launch identity's agent id and team, as an operator."""
    return dataclasses.replace(launcher, system_type=SystemType.SYS4, skills=ALL_SKILLS, operator=True)


def _refused(status: int, message: str, reason: str) -> JSONResponse:
    return JSONResponse({"code": "FORBIDDEN" if status == 401 else "INVALID_PARAMS", "message": message,
                         "details": {"reason": reason}}, status_code=status, headers={"cache-control": "no-store"})


async def _code(request: Request) -> str | None:
    """The `code` of the JSON body (None: no body of that shape, or over MAX_BODY_BYTES)."""
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            return None
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, str) and code else None


def exchange(slot: Any, secret: bytes, codes: SignInCodes) -> Callable[[Request], Awaitable[Response]]:
    """POST /console/api/session `{"code": ...}`: a sign-in code for an operator session token.
    `slot`: where the running server's app is (`AppSlot`); `codes`: the ones `agent-memory console`
    issues in this process (an empty set for `serve`, whose console signs in with tokens only)."""

    async def endpoint(request: Request) -> Response:
        app = slot.app
        if app is None:
            return JSONResponse({"code": "INTERNAL", "message": "the server is starting or stopping; retry",
                                 "details": {}}, status_code=503, headers={"cache-control": "no-store"})
        code = await _code(request)
        if code is None:
            return _refused(400, 'the request body must be a JSON object {"code": "..."}', "no_code")
        if not codes.redeem(code):
            log.warning("console_sign_in_refused", reason="unknown, used or expired code")
            return _refused(401, "this sign-in code is unknown, already used or expired; press Enter in the "
                                 "terminal running `agent-memory console` for a new sign-in URL", "invalid_code")
        caller = console_operator(app.launch_caller)
        try:
            issued = await app.tokens(secret).issue(caller, ttl_seconds=SESSION_TTL_SECONDS, kind=KIND,
                                                    call=Call(caller, new_request_id(), "console", "sign_in"))
        except Exception:  # never a traceback to the client: a request id, and the traceback in the log
            request_id = new_request_id()
            log.exception("console_sign_in_failed", request_id=request_id)
            info = internal_error(request_id)
            return JSONResponse({"code": info.code, "message": info.message, "details": info.details},
                                status_code=500, headers={"cache-control": "no-store"})
        log.info("console_signed_in", token_id=issued.claims.token_id, agent_id=caller.agent_id)
        return JSONResponse({"token": issued.token, "token_id": issued.claims.token_id,
                             "expires_at": issued.record.expires_at},
                            headers={"cache-control": "no-store"})

    return endpoint
