"""The console's ASGI app (static pages and the JSON API) and the router that puts it in front of
the MCP app at /console/. The pages load without a token; every API request needs one."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import structlog
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Match, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_memory.bootstrap import App
from agent_memory.console import api, session
from agent_memory.console.auth import SignedIn, sign_in
from agent_memory.console.guard import (
    ConsoleJSON,
    check_parameters,
    error_response as _error,
    host_checked,
    refusal_headers,
)
from agent_memory.contracts.errors import internal_error, storage_failure, to_error_info
from agent_memory.core.access.revocation import RevocationUnknown
from agent_memory.core.access.tokens import TokenError
from agent_memory.core.model.errors import DomainError, NotFound
from agent_memory.core.model.ids import new_request_id

STATIC = Path(__file__).with_name("static")
PREFIX = "/console"
STATUS = {"INVALID_PARAMS": 400, "FORBIDDEN": 403, "NOT_FOUND": 404, "CONFLICT": 409, "RATE_LIMITED": 429,
          "NOT_IMPLEMENTED": 501, "INTERNAL": 500}
Handler = Callable[[Request, App, SignedIn], Awaitable[dict[str, Any]]]
CRUD, RETRIEVE = "memory_crud", "memory_retrieve"  # the tool metrics a console call is counted in

log = structlog.get_logger("agent_memory.console")


class AppSlot:
    """Where the running server's app (opened by the MCP lifespan) is found; None until then."""

    def __init__(self) -> None:
        self.app: App | None = None

    def set(self, app: App | None) -> None:
        self.app = app


def _endpoint(handler: Handler, slot: AppSlot, secret: bytes,
              tool: str | None) -> Callable[[Request], Awaitable[Response]]:
    """A signed-in request, then what every MCP tool call goes through: the caller's rate limit
    (the tools' own bucket), the text rule on its parameters, and the tool metrics (as `tool`,
    the tool whose service the handler calls; None: not a tool call)."""

    async def endpoint(request: Request) -> Response:
        app = slot.app
        if app is None:
            return _error(503, "INTERNAL", "the server is starting or stopping; retry")
        try:
            signed = await sign_in(request, app.tokens(secret), app.audit)
        except TokenError as error:
            log.warning("console_unauthorized", reason=str(error), path=request.url.path)
            return _error(401, "FORBIDDEN", f"sign in with a valid bearer token: {error}",
                          {"reason": "invalid_token"})
        except RevocationUnknown as error:
            log.warning("console_revocation_unknown", reason=str(error), cause=repr(error.__cause__)[:300])
            return _error(503, "INTERNAL", str(error))
        started, outcome = time.perf_counter(), "ok"
        try:
            app.rate_limiter.take(signed.caller, time.monotonic())  # one budget with the MCP tools
            check_parameters(request)
            return ConsoleJSON(await handler(request, app, signed), headers={"cache-control": "no-store"})
        except DomainError as error:
            info = to_error_info(error)
            outcome = info.code
            status = error.status if isinstance(error, api.RequestRefused) else STATUS.get(info.code, 500)
            return _error(status, info.code, info.message, info.details, refusal_headers(error))
        except Exception as exc:
            outcome = "INTERNAL"
            request_id = new_request_id()
            refused = storage_failure(exc, request_id, app.failures)
            if refused is not None:
                info = to_error_info(refused)
                return _error(500, info.code, info.message, info.details)
            log.exception("console_failed", request_id=request_id, path=request.url.path)
            info = internal_error(request_id)
            return _error(500, info.code, info.message, info.details)
        finally:
            if tool is not None:
                app.metrics.observe(tool, outcome, round((time.perf_counter() - started) * 1000, 3))

    return endpoint


def console_app(slot: AppSlot, secret: bytes, security: TransportSecuritySettings | None = None,
                codes: session.SignInCodes | None = None) -> ASGIApp:
    """The console; `security`: the MCP transport's Host and Origin checks, applied here too;
    `codes`: the one-time sign-in codes it redeems (None: none)."""
    codes = codes if codes is not None else session.SignInCodes()

    def route(path: str, handler: Handler, methods: list[str], tool: str | None = None) -> Route:
        return Route(f"{PREFIX}/api{path}", _endpoint(handler, slot, secret, tool), methods=methods)

    async def unknown(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
        """Any other /console/api/ request: 405 naming the methods a known path takes, else 404."""
        allowed = sorted({method for known in routes if known.matches(request.scope)[0] is Match.PARTIAL
                          for method in known.methods or ()} - {"HEAD"})
        if allowed:
            raise api.RequestRefused(405, f"{request.method} is not allowed here; use {', '.join(allowed)}",
                                     method=request.method, allowed=allowed)
        raise NotFound(f"no console API endpoint {request.url.path}", path=request.url.path)

    routes = [
        route("/whoami", api.whoami, ["GET"]),
        route("/entries", api.browse, ["GET"], CRUD),
        route("/entries/{entry_id}", api.entry, ["GET"], CRUD),
        route("/entries/{entry_id}", api.edit, ["PATCH"], CRUD),
        route("/entries/{entry_id}", api.delete, ["DELETE"], CRUD),
        route("/entries/{entry_id}/unsupersede", api.unsupersede, ["POST"], CRUD),
        route("/conflicts", api.conflicts, ["GET"], CRUD),
        route("/conflicts/{entry_id}/resolve", api.resolve, ["POST"], CRUD),
        route("/search", api.search, ["GET"], RETRIEVE),
        route("/metrics", api.metrics, ["GET"]),
        route("/warnings", api.warnings, ["GET"]),
        # a sign-in code: no token
        Route(f"{PREFIX}/api/session", session.exchange(slot, secret, codes), methods=["POST"]),
        # any method, known or made up (no methods: every one matches): signed in (and audited) like
        # the rest, then refused as JSON
        route("/{path:path}", unknown, []),
        route("", unknown, []),  # /console/api itself
        Route(PREFIX, lambda request: RedirectResponse(f"{PREFIX}/"), methods=["GET"]),
        Mount(PREFIX, StaticFiles(directory=STATIC, html=True)),
    ]
    return host_checked(Starlette(routes=routes), security)


SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; "
                                 b"form-action 'none'"),
    (b"x-frame-options", b"DENY"),  # frame-ancestors, for browsers that predate it
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


def _hardened(send: Send) -> Send:
    """Console responses: only the console's own scripts and styles run, never inside a frame."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
        await send(message)

    return sending


def with_console(main: ASGIApp, console: ASGIApp) -> ASGIApp:
    """Requests for /console and below go to the console (its own sign-in), everything else
    (including the lifespan) to `main`."""

    async def router(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == PREFIX or path.startswith(PREFIX + "/"):
            await console(scope, receive, _hardened(send))
        else:
            await main(scope, receive, send)

    return router
