"""The memory console's JSON API on a real `agent-memory serve --http`: the MCP permission gate,
operator tokens audited on every use, edits with if_match and conflict reconciliation."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_memory.core.access.tokens import issue_token
from agent_memory.core.model.models import Caller, Skill, SystemType
from tests.e2e.servers import SECRET, agent_memory_command, http_client, http_server, server_env, token

pytestmark = pytest.mark.anyio


def operator_token(agent_id: str = "root-op") -> str:
    caller = Caller(agent_id, SystemType.SYS4, "operators", frozenset(Skill), operator=True)
    return issue_token(caller, SECRET.encode(), now=int(time.time()), ttl_seconds=3600)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("console") / "data"
    with http_server(data, MEMORY_VECTOR_BACKEND="none") as url:
        yield url.removesuffix("/mcp"), data


def api(base: str, bearer: str | None, method: str, path: str, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    return httpx.request(method, f"{base}/console/api{path}", headers=headers, timeout=30, **kwargs)


async def create(url: str, bearer: str, content: str, **where: Any) -> dict[str, Any]:
    async with http_client(url, bearer) as client:
        result = await client.call_tool("memory_crud", {"action": "create", **where, "items": [{"content": content}]})
        assert not result.is_error, result.structured_content
        return result.structured_content["items"][0]


def audit(data: Path, *args: str) -> list[dict[str, Any]]:
    done = subprocess.run([agent_memory_command(), "audit", *args], env=server_env(data, MEMORY_AUTH_SECRET=SECRET),
                          capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def audit_until(data: Path, predicate: Any, *args: str) -> list[dict[str, Any]]:
    """Audit rows once `predicate(rows)` holds (the audit log is written in the background), 10 s at most."""
    deadline = time.monotonic() + 10
    while True:
        rows = audit(data, *args)
        if predicate(rows) or time.monotonic() > deadline:
            return rows
        time.sleep(0.2)


def test_pages_load_without_a_token_and_the_api_needs_one(server: tuple[str, Path]) -> None:
    base, _ = server
    page = httpx.get(f"{base}/console/", timeout=30)
    assert page.status_code == 200 and "agent-memory" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert httpx.get(f"{base}/console/console.js", timeout=30).status_code == 200
    refused = api(base, None, "GET", "/entries")
    assert refused.status_code == 401 and refused.json()["code"] == "FORBIDDEN"
    forged = api(base, "am1.e30.AAAA", "GET", "/entries")
    assert forged.status_code == 401
    retrieve_only = token("searcher-only", skills=frozenset({Skill.RETRIEVE}))
    assert api(base, retrieve_only, "GET", "/entries").json()["code"] == "FORBIDDEN"
    assert api(base, retrieve_only, "GET", "/search", params={"q": "x"}).status_code == 200


async def test_team_red_cannot_see_team_blue_entries(server: tuple[str, Path]) -> None:
    base, _ = server
    url = f"{base}/mcp"
    red, blue = token("red-lead", "sys3", "red"), token("blue-lead", "sys3", "blue")
    red_entry = await create(url, red, "red plan", scope="team", namespace="red/ops", layer="long_term")
    blue_entry = await create(url, blue, "blue secret", scope="team", namespace="blue", layer="long_term")
    listed = api(base, red, "GET", "/entries").json()["items"]
    ids = {e["id"] for e in listed}
    assert red_entry["id"] in ids and blue_entry["id"] not in ids
    assert all(e["team"] == "red" for e in listed)
    assert api(base, red, "GET", f"/entries/{blue_entry['id']}").status_code == 404
    assert api(base, red, "GET", "/entries", params={"scope": "team", "namespace": "blue"}).json()["items"] == []
    subtree = api(base, red, "GET", "/entries", params={"namespace": "red"}).json()["items"]
    assert [e["id"] for e in subtree] == [red_entry["id"]]
    # a sys1 of team red reads its team but may not edit it, exactly as over MCP
    reader = token("red-reader", "sys1", "red")
    shown = api(base, reader, "GET", f"/entries/{red_entry['id']}").json()["entry"]
    edit = api(base, reader, "PATCH", f"/entries/{red_entry['id']}", json={"content": "x", "if_match": shown["etag"]})
    assert edit.status_code == 403 and edit.json()["code"] == "FORBIDDEN"
    assert api(base, reader, "GET", "/warnings").status_code == 403


async def test_operator_sees_every_scope_and_each_use_is_audited(server: tuple[str, Path]) -> None:
    base, data = server
    url = f"{base}/mcp"
    green = await create(url, token("green-agent", "sys1", "green"), "green private note")
    op = operator_token("op-audited")
    for _ in range(3):
        listed = api(base, op, "GET", "/entries", params={"limit": 100})
        assert listed.status_code == 200
    assert green["id"] in {e["id"] for e in listed.json()["items"]}
    shown = api(base, op, "GET", f"/entries/{green['id']}").json()
    assert shown["entry"]["content"] == "green private note"
    assert api(base, op, "GET", "/warnings").status_code == 200
    rows = audit_until(data, lambda r: len(r) >= 5, "--agent", "op-audited", "--action", "operator_access")
    assert len(rows) == 5 and all(r["details"]["operator"] is True for r in rows)
    assert {r["details"]["path"] for r in rows} >= {"/console/api/entries", f"/console/api/entries/{green['id']}"}
    reads = audit_until(data, lambda r: any(x["agent_id"] == "op-audited" for x in r), "--action", "read")
    assert any(r["agent_id"] == "op-audited" and r["entry_id"] == green["id"] and r["details"].get("operator")
               for r in reads)


async def test_an_operator_token_is_refused_on_mcp(server: tuple[str, Path]) -> None:
    base, _ = server
    answer = httpx.post(f"{base}/mcp", headers={"Authorization": f"Bearer {operator_token()}"}, json={}, timeout=30)
    assert answer.status_code == 401 and "console" in answer.json()["error_description"]


async def test_edit_with_a_stale_if_match_is_a_conflict_and_take_this_reconciles(server: tuple[str, Path]) -> None:
    base, data = server
    bearer = token("editor", "sys1", "red")
    entry = await create(f"{base}/mcp", bearer, "the deploy window is Tuesday")
    first = api(base, bearer, "PATCH", f"/entries/{entry['id']}",
                json={"content": "the deploy window is Wednesday", "if_match": entry["etag"]})
    assert first.status_code == 200 and first.json()["entry"]["version"] == 2
    stale = api(base, bearer, "PATCH", f"/entries/{entry['id']}",
                json={"content": "the deploy window is Thursday", "if_match": entry["etag"]})
    assert stale.status_code == 409
    error = stale.json()
    assert error["code"] == "CONFLICT" and error["details"]["current_version"] == 2
    conflict_id = error["details"]["conflict_id"]
    queue = api(base, bearer, "GET", "/conflicts").json()["items"]
    pair = next(p for p in queue if p["conflict"]["id"] == conflict_id)
    assert pair["original"]["content"] == "the deploy window is Wednesday"
    assert pair["conflict"]["content"] == "the deploy window is Thursday"
    outdated = api(base, bearer, "POST", f"/conflicts/{conflict_id}/resolve",
                   json={"choice": "take_this", "original_etag": entry["etag"]})
    assert outdated.status_code == 409
    done = api(base, bearer, "POST", f"/conflicts/{conflict_id}/resolve",
               json={"choice": "take_this", "original_etag": pair["original"]["etag"]})
    assert done.status_code == 200, done.text
    assert done.json()["original"]["content"] == "the deploy window is Thursday"
    assert api(base, bearer, "GET", f"/entries/{conflict_id}").status_code == 404
    assert all(p["conflict"]["id"] != conflict_id for p in api(base, bearer, "GET", "/conflicts").json()["items"])
    trail = api(base, bearer, "GET", f"/entries/{entry['id']}").json()["audit"]
    assert [(r["action"], r["outcome"]) for r in trail if r["action"] in ("create", "update")] == [
        ("create", "ok"), ("update", "ok"), ("update", "conflict"), ("update", "ok")]
    assert {r["tool"] for r in trail} == {"memory_crud", "console"}


async def test_keep_original_and_merge_reconcile_and_delete_needs_the_current_etag(server: tuple[str, Path]) -> None:
    base, _ = server
    bearer = token("merger", "sys1", "red")
    entry = await create(f"{base}/mcp", bearer, "alpha")
    api(base, bearer, "PATCH", f"/entries/{entry['id']}", json={"content": "beta", "if_match": entry["etag"]})
    conflicts = []
    for text in ("gamma", "delta"):
        stale = api(base, bearer, "PATCH", f"/entries/{entry['id']}", json={"content": text, "if_match": entry["etag"]})
        conflicts.append(stale.json()["details"]["conflict_id"])
    current = api(base, bearer, "GET", f"/entries/{entry['id']}").json()["entry"]
    kept = api(base, bearer, "POST", f"/conflicts/{conflicts[0]}/resolve",
               json={"choice": "keep_original", "original_etag": current["etag"]})
    assert kept.json()["original"]["content"] == "beta" and kept.json()["original"]["version"] == 2
    empty = api(base, bearer, "POST", f"/conflicts/{conflicts[1]}/resolve",
                json={"choice": "merge", "original_etag": current["etag"]})
    assert empty.status_code == 400 and empty.json()["code"] == "INVALID_PARAMS"
    merged = api(base, bearer, "POST", f"/conflicts/{conflicts[1]}/resolve",
                 json={"choice": "merge", "original_etag": current["etag"], "content": "beta, then delta"})
    assert merged.json()["original"]["content"] == "beta, then delta"
    final = merged.json()["original"]
    assert api(base, bearer, "DELETE", f"/entries/{entry['id']}", params={"if_match": entry["etag"]}).status_code == 409
    assert api(base, bearer, "DELETE", f"/entries/{entry['id']}", params={"if_match": final["etag"]}).status_code == 200
    assert api(base, bearer, "GET", f"/entries/{entry['id']}").status_code == 404


async def test_filters_search_with_score_parts_and_metrics(server: tuple[str, Path]) -> None:
    base, _ = server
    bearer = token("searcher", "sys1", "red")
    async with http_client(f"{base}/mcp", bearer) as client:
        await client.call_tool("memory_crud", {"action": "create", "items": [
            {"content": "postgres vacuum runs nightly", "tags": ["db", "ops"], "source": "tool"},
            {"content": "lunch is at noon", "tags": ["life"]}]})
    tagged = api(base, bearer, "GET", "/entries", params={"tags": "db,ops"}).json()["items"]
    assert [e["content"] for e in tagged] == ["postgres vacuum runs nightly"]
    assert [e["content"] for e in api(base, bearer, "GET", "/entries", params={"source": "tool"}).json()["items"]] == [
        "postgres vacuum runs nightly"]
    assert api(base, bearer, "GET", "/entries", params={"conflict": "true"}).json()["items"] == []
    current = api(base, bearer, "GET", "/entries", params={"superseded": "false", "scope": "agent"}).json()["items"]
    assert len(current) == 2
    bad = api(base, bearer, "GET", "/entries", params={"layer": "attic"})
    assert bad.status_code == 400 and "layer must be one of" in bad.json()["message"]
    found = api(base, bearer, "GET", "/search", params={"q": "postgres vacuum", "mode": "keyword"}).json()
    assert found["items"][0]["content"] == "postgres vacuum runs nightly"
    assert {"keyword", "recency", "priority"} <= set(found["items"][0]["score_parts"])
    metrics = api(base, bearer, "GET", "/metrics").json()
    assert metrics["tools"]["tools"]["memory_crud"]["calls"] >= 1
    assert {"p50", "p95", "p99"} <= set(metrics["tools"]["tools"]["memory_crud"]["latency_ms"])
    assert metrics["retrieval"]["retrievals"] >= 1 and "vector_outbox_backlog" in metrics["store"]
    readable = api(base, bearer, "GET", "/entries", params={"limit": 100}).json()["items"]
    assert metrics["store"]["entries"] == len(readable) and "database_bytes" not in metrics["store"]
