"""End to end: an invalid identity is answered with a clear error over stdio (a real subprocess,
raw JSON-RPC and the SDK client) and over HTTP (trusted `_meta`, and a signed token whose claims
are not a valid identity)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.e2e.servers import SECRET, agent_memory_command, http_client, http_server, server_env, token
from tests.e2e.test_stdio import _read_responses, _rpc

pytestmark = pytest.mark.anyio

KEY = "agent-memory/identity"
BAD = {"agent_id": "worker", "system_type": "3", "team": "ops"}
ACCEPTED = "sys1, sys2, sys3, sys4, sys5"


def test_stdio_initialize_identity_error_answers_tools_list_and_calls(tmp_path: Path) -> None:
    requests = "".join([
        _rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "raw", "version": "1"}, "_meta": {KEY: BAD}}),
        _rpc(None, "notifications/initialized", {}),
        _rpc(2, "tools/list", {}),
        _rpc(3, "tools/call", {"name": "memory_crud", "arguments": {"action": "list"}}),
    ])
    proc = subprocess.Popen([agent_memory_command(), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=server_env(tmp_path))
    assert proc.stdin and proc.stdout
    proc.stdin.write(requests)
    proc.stdin.flush()
    lines = _read_responses(proc.stdout.fileno(), expected=3, timeout=60)
    _, stderr = proc.communicate(timeout=60)
    by_id = {m["id"]: m for m in map(json.loads, lines) if "id" in m}
    listed = by_id[2]["error"]
    assert listed["code"] == -32602 and "result" not in by_id[2]
    for text in ("system_type", ACCEPTED, "got '3'", "did you mean 'sys3'?", "initialize request's _meta"):
        assert text in listed["message"], listed
    assert listed["data"]["code"] == "FORBIDDEN" and listed["data"]["details"]["field"] == "system_type"
    called = by_id[3]["result"]
    assert called["isError"] is True
    assert called["structuredContent"]["errors"][0]["message"] == listed["message"]
    refusals = [json.loads(line) for line in stderr.splitlines() if "tools_list_identity_refused" in line]
    assert len(refusals) == 1 and refusals[0]["field"] == "system_type"


async def test_stdio_sdk_client_sees_the_identity_error_on_tools_list(tmp_path: Path) -> None:
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=server_env(tmp_path))
    async with Client(params, mode="auto", read_timeout_seconds=30) as client:
        missing_team = {"agent_id": "worker", "system_type": "sys1"}
        with pytest.raises(MCPError) as raised:
            await client.list_tools(meta={KEY: missing_team})
        assert "team is required" in raised.value.error.message
        assert "this request's _meta" in raised.value.error.message
        unknown_skill = {**BAD, "system_type": "sys1", "skills": ["memory_admin"]}
        result = await client.call_tool("memory_crud", {"action": "list"}, meta={KEY: unknown_skill})
        error = result.structured_content["errors"][0]
        assert result.is_error and error["code"] == "FORBIDDEN" and error["details"]["field"] == "skills"
        assert "memory_crud, memory_retrieve, memory_reflect" in error["message"]
        assert error["details"]["allowed"] == ["memory_crud", "memory_retrieve", "memory_reflect"]
        assert [t.name for t in (await client.list_tools()).tools] == [  # the launch identity is fine
            "memory_crud", "memory_retrieve", "memory_reflect"]


def _signed(claims: dict) -> str:
    """A token carrying `claims` under the test server's secret: a correct signature over claims
    that are no valid identity (as a hand-made or future-version token could be)."""
    payload = base64.urlsafe_b64encode(json.dumps(claims, separators=(",", ":")).encode()).rstrip(b"=").decode()
    signature = hmac.new(SECRET.encode(), f"am1.{payload}".encode(), hashlib.sha256).digest()
    return f"am1.{payload}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


async def test_http_identity_errors_name_the_field_and_the_fix(tmp_path: Path) -> None:
    with http_server(tmp_path / "data", MEMORY_TRUST_CLIENT_META="1") as url:
        async with http_client(url, token("worker", "sys3", "ops")) as client:
            with pytest.raises(MCPError) as raised:
                await client.list_tools(meta={KEY: BAD})
            assert ACCEPTED in raised.value.error.message and raised.value.error.code == -32602
            with pytest.raises(MCPError) as raised:
                await client.list_tools(meta={KEY: {**BAD, "system_type": "sys4"}})
            message = raised.value.error.message
            assert "contradicts the bearer token (system_type)" in message and "the token says sys3" in message
            result = await client.call_tool("memory_crud", {"action": "list"},
                                            meta={KEY: {**BAD, "system_type": "sys3", "skills": ["memory_x"]}})
            assert result.is_error and result.structured_content["errors"][0]["details"]["field"] == "skills"
        now = int(time.time())
        bad_claims = _signed({"agent_id": "worker", "system_type": "3", "team": "ops",
                              "skills": ["memory_crud"], "iat": now, "exp": now + 600})
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                                       headers={"Authorization": f"Bearer {bad_claims}",
                                                "Accept": "application/json, text/event-stream"})
        assert response.status_code == 401
        reason = response.json()["error_description"]
        assert "system_type" in reason and ACCEPTED in reason and "agent-memory token issue" in reason
