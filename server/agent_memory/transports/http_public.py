"""The HTTP paths answered without a token: `/healthz` and the OAuth discovery documents.

RFC 9728 protected-resource metadata tells an MCP client that `/mcp` takes bearer tokens in the
`Authorization` header and names no authorization server, so a client has no OAuth flow to start
and asks its user for the token instead. Every other `/.well-known/` document (RFC 8414
authorization-server metadata, OpenID configuration) is 404: this server issues no tokens over
HTTP (`agent-memory token issue` mints them).
"""

from __future__ import annotations

import json
import re

from starlette.types import Scope, Send

HEALTH_PATH = "/healthz"
METADATA_PATH = "/.well-known/oauth-protected-resource"
MCP_PATH = "/mcp"
_HOST = re.compile(r"[A-Za-z0-9.\-]+(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?")


def base_url(scope: Scope) -> str:
    """scheme://host[:port] the client used (its Host header when well formed, else the bound address)."""
    scheme = "https" if scope.get("scheme") == "https" else "http"
    host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1").strip()
    if not _HOST.fullmatch(host):
        server_host, port = scope.get("server") or ("127.0.0.1", 80)
        host = f"[{server_host}]:{port}" if ":" in str(server_host) else f"{server_host}:{port}"
    return f"{scheme}://{host}"


def resource_metadata_url(scope: Scope) -> str:
    return base_url(scope) + METADATA_PATH + MCP_PATH


def protected_resource_metadata(scope: Scope) -> dict:
    return {
        "resource": base_url(scope) + MCP_PATH,
        "bearer_methods_supported": ["header"],
        "resource_name": "agent-memory",
    }


async def answer_public(scope: Scope, send: Send) -> bool:
    """Answer `scope` if it is a public path (True), else leave it to authentication (False)."""
    path = scope.get("path") or ""
    if path != HEALTH_PATH and not path.startswith("/.well-known/"):
        return False
    if scope.get("method") not in ("GET", "HEAD", "OPTIONS"):
        await _json(send, scope, 405, {"error": "method not allowed"}, [(b"allow", b"GET, HEAD, OPTIONS")])
    elif scope.get("method") == "OPTIONS":
        await _json(send, scope, 204, None, [])
    elif path == HEALTH_PATH:
        await _json(send, scope, 200, {"status": "ok"}, [(b"cache-control", b"no-store")])
    elif path.rstrip("/") in (METADATA_PATH, METADATA_PATH + MCP_PATH):
        await _json(send, scope, 200, protected_resource_metadata(scope), [])
    else:
        await _json(send, scope, 404, {"error": "not found"}, [])
    return True


async def _json(send: Send, scope: Scope, status: int, document: dict | None,
                headers: list[tuple[bytes, bytes]]) -> None:
    body = b"" if document is None else json.dumps(document).encode()
    headers = [*headers, (b"access-control-allow-origin", b"*"),
               (b"access-control-allow-methods", b"GET, HEAD, OPTIONS"),
               (b"access-control-allow-headers", b"mcp-protocol-version")]
    if document is not None:
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body})
