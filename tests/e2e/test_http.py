"""`agent-memory serve --http`: bearer tokens, both protocol generations, limits."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.e2e.servers import http_client, http_server, token

pytestmark = pytest.mark.anyio

ALL_TOOLS = ["memory_crud", "memory_retrieve", "memory_reflect"]

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "1"}}}
CREATE = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "memory_crud", "arguments": {"action": "create", "items": [{"content": "sneaky"}]},
                     "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                               "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                               "io.modelcontextprotocol/clientCapabilities": {}}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
           "MCP-Protocol-Version": "2026-07-28"}


@pytest.fixture(scope="module")
def shared_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_server(tmp_path_factory.mktemp("http") / "data") as url:
        yield url


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_token_identity_drives_memory_crud_over_http(shared_url: str, mode: str) -> None:
    agent = f"http-{mode}"
    async with http_client(shared_url, token(agent, "sys3", "red"), mode) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ALL_TOOLS
        created = await client.call_tool("memory_crud", {"action": "create", "items": [{"content": "over http"}]})
        assert not created.is_error, created.structured_content
        entry = created.structured_content["items"][0]
        assert (entry["owner_agent_id"], entry["team"], entry["namespace"]) == (agent, "red", agent)
        team = await client.call_tool("memory_crud", {"action": "create", "scope": "team", "namespace": "red",
                                                      "layer": "meta", "items": [{"content": "team rule"}]})
        assert not team.is_error
        listed = await client.call_tool("memory_crud", {"action": "list"})
        assert [e["id"] for e in listed.structured_content["items"]] == [entry["id"]]


async def test_token_skills_filter_tools_list_and_calls(shared_url: str) -> None:
    async with http_client(shared_url, token("limited", skills=frozenset())) as client:
        assert (await client.list_tools()).tools == []
        result = await client.call_tool("memory_crud", {"action": "list"})
        assert result.is_error and result.structured_content["errors"][0]["code"] == "FORBIDDEN"


def _forged() -> str:
    head, payload, signature = token("mallory", "sys1", "red").split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["system_type"], claims["team"] = "sys4", "blue"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{head}.{forged}.{signature}"


BAD_AUTHORIZATIONS = {
    "missing": None,
    "not bearer": "Basic YWxpY2U6cGFzcw==",
    "empty bearer": "Bearer",
    "malformed": "Bearer not-a-token",
    "expired": f"Bearer {token('alice', ttl=60, now=int(time.time()) - 3600)}",
    "forged": f"Bearer {_forged()}",
    "wrong secret": f"Bearer {token('alice', secret='another-secret-0123456789abcdef')}",
}


@pytest.mark.parametrize("case", list(BAD_AUTHORIZATIONS))
async def test_bad_or_missing_token_is_401_and_nothing_runs(shared_url: str, case: str) -> None:
    headers = dict(HEADERS)
    if BAD_AUTHORIZATIONS[case] is not None:
        headers["Authorization"] = BAD_AUTHORIZATIONS[case]
    async with httpx2.AsyncClient(timeout=30) as http:
        for body in (INITIALIZE, CREATE):
            response = await http.post(shared_url, json=body, headers=headers)
            assert response.status_code == 401, response.text
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert response.json()["error"] == "invalid_token"
    async with http_client(shared_url, token("mallory", "sys4", "blue")) as client:
        listed = await client.call_tool("memory_crud", {"action": "list", "namespace": "mallory"})
        assert listed.structured_content["items"] == []
    async with http_client(shared_url, token("alice", "sys1", "red")) as client:
        listed = await client.call_tool("memory_crud", {"action": "list"})
        assert "sneaky" not in [e["content"] for e in listed.structured_content["items"]]


async def test_meta_identity_is_ignored_on_http_by_default(shared_url: str) -> None:
    async with http_client(shared_url, token("honest", "sys1", "red")) as client:
        meta = {"agent-memory/identity": {"agent_id": "boss", "system_type": "sys4", "team": "blue"}}
        result = await client.call_tool("memory_crud", {"action": "create", "items": [{"content": "x"}]}, meta=meta)
        assert result.structured_content["items"][0]["owner_agent_id"] == "honest"


async def test_trusted_meta_may_not_contradict_the_token(tmp_path: Path) -> None:
    with http_server(tmp_path / "data", MEMORY_TRUST_CLIENT_META="1") as url:
        async with http_client(url, token("agent-a", "sys3", "red")) as client:
            args = {"action": "list"}
            contradicting = {"agent-memory/identity": {"agent_id": "agent-b", "system_type": "sys3", "team": "red"}}
            result = await client.call_tool("memory_crud", args, meta=contradicting)
            error = result.structured_content["errors"][0]
            assert result.is_error and error["code"] == "FORBIDDEN" and error["details"]["field"] == "agent_id"
            escalating = {"agent-memory/identity": {"agent_id": "agent-a", "system_type": "sys4", "team": "red"}}
            result = await client.call_tool("memory_crud", args, meta=escalating)
            assert result.structured_content["errors"][0]["details"]["field"] == "system_type"
            narrowing = {"agent-memory/identity": {"agent_id": "agent-a", "system_type": "sys3", "team": "red",
                                                   "skills": ["memory_retrieve"]}}
            result = await client.call_tool("memory_crud", args, meta=narrowing)
            assert result.structured_content["errors"][0]["details"] == {"skill": "memory_crud"}
            repeating = {"agent-memory/identity": {"agent_id": "agent-a", "system_type": "sys3", "team": "red"}}
            result = await client.call_tool("memory_crud", args, meta=repeating)
            assert not result.is_error


async def test_oversize_request_body_gets_413(tmp_path: Path) -> None:
    with http_server(tmp_path / "data", MEMORY_HTTP_MAX_REQUEST_BYTES="4096") as url:
        body = json.loads(json.dumps(CREATE))
        body["params"]["arguments"]["items"] = [{"content": "x" * 5000}]
        headers = {**HEADERS, "Authorization": f"Bearer {token('alice')}"}
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.post(url, json=body, headers=headers)
        assert response.status_code == 413
        assert "too large" in response.text.lower()
        async with http_client(url, token("alice")) as client:
            listed = await client.call_tool("memory_crud", {"action": "list"})
            assert listed.structured_content["items"] == []
            small = await client.call_tool("memory_crud", {"action": "create", "items": [{"content": "fits"}]})
            assert not small.is_error


async def test_rate_limit_answers_rate_limited_with_retry_after_over_http(tmp_path: Path) -> None:
    with http_server(tmp_path / "data", MEMORY_RATE_LIMIT_PER_SECOND="0.5", MEMORY_RATE_LIMIT_BURST="3") as url:
        async with http_client(url, token("busy")) as busy, http_client(url, token("calm")) as calm:
            outcomes = []
            for _ in range(4):
                result = await busy.call_tool("memory_crud", {"action": "list"})
                outcomes.append(result.structured_content["errors"][0] if result.is_error else "ok")
            assert outcomes[:3] == ["ok", "ok", "ok"]
            assert outcomes[3]["code"] == "RATE_LIMITED"
            assert 0 < outcomes[3]["details"]["retry_after_seconds"] <= 2
            assert not (await calm.call_tool("memory_crud", {"action": "list"})).is_error


def _lenient_variants(good: str) -> dict[str, str]:
    return {"junk in signature": good[:-4] + "!!" + good[-4:], "padding appended": good + "==",
            "junk in claims": good.replace(".", ".!", 1)}


async def test_a_token_is_accepted_only_in_its_one_canonical_spelling(shared_url: str) -> None:
    good = token("strict", "sys1", "red")
    async with httpx2.AsyncClient(timeout=30) as http:
        for case, variant in _lenient_variants(good).items():
            headers = {**HEADERS, "Authorization": f"Bearer {variant}"}
            response = await http.post(shared_url, json=CREATE, headers=headers)
            assert response.status_code == 401, case
    async with http_client(shared_url, good) as client:
        assert not (await client.call_tool("memory_crud", {"action": "list"})).is_error


async def test_a_session_belongs_to_the_identity_that_opened_it(shared_url: str) -> None:
    legacy = {**HEADERS, "MCP-Protocol-Version": "2025-11-25"}
    owner = {**legacy, "Authorization": f"Bearer {token('session-owner', 'sys3', 'red')}"}
    list_tools = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
    async with httpx2.AsyncClient(timeout=30) as http:
        opened = await http.post(shared_url, json=INITIALIZE, headers=owner)
        assert opened.status_code == 200
        session = opened.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(shared_url, json=initialized, headers={**owner, "Mcp-Session-Id": session})
                ).status_code == 202
        for intruder in (token("intruder", "sys4", "blue"), token("session-owner", "sys3", "blue"),
                         token("session-owner", "sys5", "red")):
            theirs = {**legacy, "Authorization": f"Bearer {intruder}", "Mcp-Session-Id": session}
            unknown = {**theirs, "Mcp-Session-Id": "f" * 32}
            for method, kwargs in (("POST", {"json": list_tools}), ("GET", {}), ("DELETE", {})):
                refused = await http.request(method, shared_url, headers=theirs, **kwargs)
                absent = await http.request(method, shared_url, headers=unknown, **kwargs)
                assert refused.status_code == absent.status_code == 404, (method, refused.text)
                assert refused.json() == absent.json()  # indistinguishable from a session that does not exist
        # The owner's session survived all of it, and a renewed token for the same identity keeps it.
        renewed = {**owner, "Authorization": f"Bearer {token('session-owner', 'sys3', 'red', ttl=120)}",
                   "Mcp-Session-Id": session}
        listed = await http.post(shared_url, json=list_tools, headers=renewed)
        assert listed.status_code == 200 and "memory_crud" in listed.text
        assert (await http.delete(shared_url, headers=renewed)).status_code == 200
        gone = await http.post(shared_url, json=list_tools, headers=renewed)
        assert gone.status_code == 404


@pytest.mark.parametrize("depth", [40, 300, 900])
async def test_arguments_nested_hundreds_deep_get_a_tool_result_naming_the_field_over_http(
        shared_url: str, depth: int) -> None:
    body = json.dumps(CREATE).replace('{"content": "sneaky"}', '{"content": "deep", "tags": %s}'
                                      % ("[" * depth + '"x"' + "]" * depth))
    headers = {**HEADERS, "Authorization": f"Bearer {token('deep')}", "Mcp-Method": "tools/call",
               "Mcp-Name": "memory_crud"}
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(shared_url, content=body, headers=headers)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["errors"] == [{
        "code": "INVALID_PARAMS", "message": "items[0].tags nests arrays or objects deeper than 32 levels",
        "details": {"field": "items[0].tags", "limit": 32}}]
    async with http_client(shared_url, token("deep")) as client:
        listed = await client.call_tool("memory_crud", {"action": "list"})
        assert listed.structured_content["items"] == []
