"""What the console applies to every request besides signing in, so that it holds to what /mcp
holds to: the Host and Origin checks of the MCP transport (DNS-rebinding protection, the same
rule and statuses), the text rule (core/model/text.py) on every query and path parameter, one rate-limit
budget per caller shared with the MCP tools, and JSON answers that any stored text can be
written in."""

from __future__ import annotations

import math
from typing import Any

import structlog
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_memory.contracts.errors import has_lone_surrogate
from agent_memory.core.model.errors import DomainError
from agent_memory.core.model.text import check_text

log = structlog.get_logger("agent_memory.console")

# what the MCP transport's refusal statuses mean, said as the console says everything
TRANSPORT_REFUSALS = {
    421: ("INVALID_PARAMS", "host", "the Host header names no address this server answers on (DNS-rebinding "
                                    "protection, as on /mcp): use the address the server was started with"),
    403: ("FORBIDDEN", "origin", "requests from pages of another origin are refused (DNS-rebinding protection, "
                                 "as on /mcp)"),
}


class ConsoleJSON(JSONResponse):
    """JSON as Starlette writes it (UTF-8); text holding a lone surrogate, which an older import
    could leave in a store's JSON columns (tags) and no UTF-8 can hold, is answered with each
    surrogate written as the text `\\udXXX` instead of failing the whole answer."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return super().render(_escaped(content))


def _escaped(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8") if has_lone_surrogate(value) else value
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_escaped(v) for v in value]
    return value


def error_response(status: int, code: str, message: str, details: dict[str, Any] | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    """`{code, message, details}`, never cached; a 401 carries the Bearer challenge."""
    headers = {"cache-control": "no-store", **(headers or {})}
    if status == 401:
        headers["www-authenticate"] = 'Bearer error="invalid_token"'
    return ConsoleJSON({"code": code, "message": message, "details": details or {}}, status_code=status,
                       headers=headers)


def refusal_headers(error: DomainError) -> dict[str, str]:
    """The HTTP headers a refusal carries: `Retry-After` (whole seconds, rounded up) when rate
    limited, `Allow` for a wrong method."""
    headers: dict[str, str] = {}
    wait = error.details.get("retry_after_seconds")
    if isinstance(wait, int | float):
        headers["retry-after"] = str(max(1, math.ceil(wait)))
    allowed = error.details.get("allowed")
    if error.details.get("method") is not None and isinstance(allowed, list):
        headers["allow"] = ", ".join(str(method) for method in allowed)
    return headers


def check_parameters(request: Request) -> None:
    """The text rule on the request's path parameters (named as the route names them: `entry_id`,
    or `path` for an unknown endpoint) and query parameters (names and values), before any handler
    reads them.

    Raises:
        InvalidParams: naming the first field that holds a NUL or a lone surrogate.
    """
    check_text(dict(request.path_params))
    for name, value in request.query_params.multi_items():
        check_text({name: value})


def host_checked(app: ASGIApp, security: TransportSecuritySettings | None) -> ASGIApp:
    """`app` behind the Host and Origin checks the MCP transport makes with `security` (the MCP
    session manager's own settings; on by default when the server listens on loopback): a request
    /mcp would refuse for them is refused with the same status (421 for the Host, 403 for the
    Origin), as console JSON, before anything else runs."""
    if security is None or not security.enable_dns_rebinding_protection:
        return app
    transport = TransportSecurityMiddleware(security)

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = await transport.validate_request(Request(scope), is_post=False)
            if refused is not None:
                code, field, message = TRANSPORT_REFUSALS.get(refused.status_code, TRANSPORT_REFUSALS[421])
                log.warning("console_transport_refused", field=field, path=scope.get("path", "")[:200],
                            client=(scope.get("client") or ("?",))[0])
                await error_response(refused.status_code, code, message, {"field": field})(scope, receive, send)
                return
        await app(scope, receive, send)

    return checked
