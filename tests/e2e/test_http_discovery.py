"""What `serve --http` answers without a token: `/healthz`, RFC 9728 protected-resource metadata
(a bearer-token resource naming no OAuth server), 404 for OAuth server discovery, and 401s whose
challenge points at that metadata and carries the real reason."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    extract_field_from_www_auth,
    extract_resource_metadata_from_www_auth,
)

from tests.e2e.servers import http_server
from tests.e2e.test_inspector import ENTRY, INSPECTOR
from tests.npm_cache import node_script

pytestmark = pytest.mark.anyio

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_server(Path(tmp_path_factory.mktemp("discovery")) / "data") as mcp_url:
        yield mcp_url


async def test_healthz_answers_without_a_token_and_says_nothing_else(url: str) -> None:
    base = url.removesuffix("/mcp")
    async with httpx2.AsyncClient(timeout=30) as http:
        health = await http.get(base + "/healthz")
        assert (health.status_code, health.json()) == (200, {"status": "ok"})
        assert health.headers["cache-control"] == "no-store"
        assert (await http.head(base + "/healthz")).status_code == 200
        assert (await http.post(base + "/healthz")).status_code == 405


async def test_protected_resource_metadata_names_a_bearer_resource_and_no_oauth_server(url: str) -> None:
    base = url.removesuffix("/mcp")
    async with httpx2.AsyncClient(timeout=30) as http:
        # Where an MCP client looks for it (SEP-985 order: path-suffixed first, then the root).
        for where in build_protected_resource_metadata_discovery_urls(None, url):
            found = await http.get(where)
            assert found.status_code == 200, where
            assert found.json() == {"resource": url, "bearer_methods_supported": ["header"],
                                    "resource_name": "agent-memory"}
            assert found.headers["access-control-allow-origin"] == "*"  # browser-based clients (Inspector)
        for oauth_server in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration",
                             "/.well-known/oauth-authorization-server/mcp"):
            assert (await http.get(base + oauth_server)).status_code == 404


@pytest.mark.parametrize(("authorization", "reason"), [
    (None, "missing bearer token"),
    ("Bearer not-a-token", "malformed token"),
    ("Basic YWxpY2U6cGFzcw==", "malformed Authorization header; expected 'Bearer <token>'"),
])
async def test_a_401_points_at_the_metadata_and_gives_the_reason(url: str, authorization: str | None,
                                                                 reason: str) -> None:
    headers = dict(HEADERS) | ({"Authorization": authorization} if authorization else {})
    async with httpx2.AsyncClient(timeout=30) as http:
        refused = await http.post(url, json=INITIALIZE, headers=headers)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer ")
    # Read as the MCP SDK's OAuth client reads it.
    assert extract_resource_metadata_from_www_auth(refused) == url.replace("/mcp", "/.well-known/"
                                                                           "oauth-protected-resource/mcp")
    assert extract_field_from_www_auth(refused, "error") == "invalid_token"
    assert extract_field_from_www_auth(refused, "error_description").startswith(reason)
    assert refused.json() == {"error": "invalid_token", "error_description":
                              extract_field_from_www_auth(refused, "error_description")}


def test_the_inspector_reports_the_servers_reason(url: str) -> None:
    """A real third-party client (skipped, with the reason, without node/npm or the registry)."""
    command, why = node_script(INSPECTOR, ENTRY)
    if command is None:
        pytest.skip(f"MCP Inspector check skipped: {why}")
    refused = subprocess.run([*command, "--cli", url, "--transport", "http", "--header",
                              "Authorization: Bearer not-a-token", "--method", "tools/list", "--stored-auth-only"],
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0
    assert "malformed token" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
