"""The memory console's API under attack, on a real `agent-memory serve --http`: what another team
may not see (entries, conflicts, audit rows, counts) however the namespace is spelt, malformed and
oversized requests answered {code, message, details} without a traceback, hardening headers on
every answer, operator use audited even when it fails."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_memory.core.model.models import Skill
from tests.e2e.servers import http_client, http_server, token
from tests.e2e.test_console_api import api, audit_until, create, operator_token

pytestmark = pytest.mark.anyio

BODY_LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("console-adv") / "data"
    with http_server(data, MEMORY_VECTOR_BACKEND="none", MEMORY_HTTP_MAX_REQUEST_BYTES=str(BODY_LIMIT),
                     MEMORY_RATE_LIMIT_PER_SECOND="0") as url:
        yield url.removesuffix("/mcp"), data


def send(base: str, bearer: str | None, method: str, path: str, body: bytes | object,
         content_type: str = "application/json") -> httpx.Response:
    """A request with a raw body (bytes, or an iterator of bytes: sent chunked, without a length)."""
    headers = {"Content-Type": content_type, **({"Authorization": f"Bearer {bearer}"} if bearer else {})}
    return httpx.request(method, f"{base}/console/api{path}", headers=headers, content=body, timeout=30)


def structured(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"code", "message", "details"} and body["code"] == code, body
    assert "Traceback" not in response.text and 'File "' not in response.text
    return body


async def test_namespace_spellings_never_reach_another_team(server: tuple[str, Path]) -> None:
    base, _ = server
    url = f"{base}/mcp"
    red = token("red-boss", "sys3", "red")
    mine = await create(url, red, "red root", scope="team", namespace="red", layer="long_term")
    await create(url, red, "red ops", scope="team", namespace="red/ops", layer="long_term")
    theirs = set()
    for team, namespace in (("red2", "red2"), ("red2", "red2/x"), ("RED", "RED"), ("Red", "Red/ops"), ("red_", "red_")):
        other = token(f"{team}-boss", "sys3", team)
        theirs.add((await create(url, other, f"{team} {namespace}", scope="team", namespace=namespace,
                                 layer="long_term"))["id"])
    # an agent id reused in another team: red2's "twin" is not red's "twin"
    theirs.add((await create(url, token("twin", "sys1", "red2"), "red2 twin private"))["id"])
    await create(url, token("twin", "sys1", "red"), "red twin private")
    reader = token("twin", "sys1", "red")
    for namespace in ("", "red", "red/", "/red", "red2", "red2/", "RED", "Red", "red/../red2", "rеd", "red%2F",
                      "red/ops/..", "twin", "twin/", "red\\", "red2/x", " red", "red "):
        for scope in ("", "agent", "team", "global"):
            answer = api(base, reader, "GET", "/entries", params={"namespace": namespace, "scope": scope,
                                                                   "limit": 100})
            assert answer.status_code == 200, answer.text
            items = answer.json()["items"]
            assert not {e["id"] for e in items} & theirs, (namespace, scope)
            assert all(e["team"] == "red" for e in items), (namespace, scope)
    assert mine["id"] in {e["id"] for e in api(base, reader, "GET", "/entries", params={"namespace": "red/"}).json()[
        "items"]}
    for owner in ("twin", "red2-boss"):
        items = api(base, reader, "GET", "/entries", params={"owner": owner, "limit": 100}).json()["items"]
        assert not {e["id"] for e in items} & theirs
    for entry_id in theirs:
        structured(api(base, reader, "GET", f"/entries/{entry_id}"), 404, "NOT_FOUND")
    found = api(base, reader, "GET", "/search", params={"q": "red2", "mode": "keyword"}).json()["items"]
    assert not {e["id"] for e in found} & theirs
    store = api(base, reader, "GET", "/metrics").json()["store"]
    assert all(n["namespace"] in ("red", "red/ops", "twin") for n in store["namespaces"]), store["namespaces"]


async def test_another_teams_conflicts_stay_out_of_the_queue(server: tuple[str, Path]) -> None:
    base, _ = server
    blue = token("blue-writer", "sys1", "blue")
    entry = await create(f"{base}/mcp", blue, "blue alpha")
    api(base, blue, "PATCH", f"/entries/{entry['id']}", json={"content": "blue beta", "if_match": entry["etag"]})
    stale = api(base, blue, "PATCH", f"/entries/{entry['id']}", json={"content": "blue gamma",
                                                                       "if_match": entry["etag"]})
    conflict_id = structured(stale, 409, "CONFLICT")["details"]["conflict_id"]
    red = token("red-resolver", "sys3", "red")
    assert all(p["conflict"]["id"] != conflict_id for p in api(base, red, "GET", "/conflicts").json()["items"])
    structured(api(base, red, "POST", f"/conflicts/{conflict_id}/resolve",
                   json={"choice": "keep_original", "original_etag": "x"}), 404, "NOT_FOUND")
    structured(api(base, red, "DELETE", f"/entries/{conflict_id}", params={"if_match": "x"}), 404, "NOT_FOUND")
    assert conflict_id in {p["conflict"]["id"] for p in api(base, blue, "GET", "/conflicts").json()["items"]}


async def test_an_entrys_audit_trail_shows_no_other_teams_callers(server: tuple[str, Path]) -> None:
    base, data = server
    owner = token("trail-owner", "sys3", "violet")
    entry = await create(f"{base}/mcp", owner, "violet plan", scope="team", namespace="violet", layer="long_term")
    # another team probes the id (a denial is audited with the entry's id), and an agent id of
    # that other team reads global memory next to it
    structured(api(base, token("orange-spy", "sys4", "orange"), "GET", f"/entries/{entry['id']}"), 404, "NOT_FOUND")
    op = operator_token("op-trail")
    assert api(base, op, "GET", f"/entries/{entry['id']}").status_code == 200
    audit_until(data, lambda r: any(x["agent_id"] == "orange-spy" for x in r), "--action", "read")
    trail = api(base, token("violet-reader", "sys1", "violet"), "GET", f"/entries/{entry['id']}").json()["audit"]
    assert trail and all(r["team"] == "violet" or r["details"].get("operator") for r in trail), trail
    assert not any(r["agent_id"] == "orange-spy" for r in trail)
    assert any(r["agent_id"] == "op-trail" for r in trail)  # an operator's reading of it is the team's to know
    everything = api(base, op, "GET", f"/entries/{entry['id']}").json()["audit"]
    assert any(r["agent_id"] == "orange-spy" and r["outcome"] == "denied" for r in everything)


async def test_the_trail_shows_the_newest_rows_of_a_busy_entry(server: tuple[str, Path]) -> None:
    base, _ = server
    bearer = token("busy-reader", "sys1", "teal")
    entry = await create(f"{base}/mcp", bearer, "read very often")
    async with http_client(f"{base}/mcp", bearer) as client:
        for _ in range(60):  # 600 reads, more than the trail shows
            ids = [{"id": entry["id"]}] * 10
            result = await client.call_tool("memory_crud", {"action": "read", "items": ids})
            assert not result.is_error, result.structured_content
    current = entry
    for text in ("edited once", "edited twice"):
        current = api(base, bearer, "PATCH", f"/entries/{entry['id']}",
                      json={"content": text, "if_match": current["etag"]}).json()["entry"]
    trail = api(base, bearer, "GET", f"/entries/{entry['id']}").json()["audit"]
    assert [r["action"] for r in trail if r["action"] == "update"] == ["update", "update"]
    assert trail == sorted(trail, key=lambda r: (r["at"], r["seq"]))


async def test_malformed_and_oversized_requests_get_structured_errors(server: tuple[str, Path]) -> None:
    base, _ = server
    bearer = token("fuzzer", "sys1", "red")
    entry = await create(f"{base}/mcp", bearer, "fuzz target")
    path = f"/entries/{entry['id']}"
    structured(send(base, bearer, "PATCH", path, b"{not json"), 400, "INVALID_PARAMS")
    structured(send(base, bearer, "PATCH", path, b"\xff\xfe"), 400, "INVALID_PARAMS")
    structured(api(base, bearer, "PATCH", path, json=["content"]), 400, "INVALID_PARAMS")
    structured(send(base, bearer, "PATCH", path, b"[" * 10_000 + b"]" * 10_000), 400, "INVALID_PARAMS")
    structured(api(base, bearer, "PATCH", path, json={"content": "x"}), 400, "INVALID_PARAMS")
    structured(api(base, bearer, "PATCH", path, json={"content": "x", "if_match": 7}), 400, "INVALID_PARAMS")
    structured(api(base, bearer, "PATCH", path, json={"content": "x", "if_match": ["a"]}), 400, "INVALID_PARAMS")
    structured(api(base, bearer, "PATCH", path, json={"owner_agent_id": "x", "if_match": "a"}), 400,
               "INVALID_PARAMS")
    structured(api(base, bearer, "PATCH", path, json={"content": "x", "if_match": "stale"}), 409, "CONFLICT")
    structured(api(base, bearer, "PATCH", "/entries/no-such-id", json={"content": "x", "if_match": "a"}), 404,
               "NOT_FOUND")
    structured(api(base, bearer, "DELETE", "/entries/no-such-id", params={"if_match": "a"}), 404, "NOT_FOUND")
    structured(api(base, bearer, "DELETE", path), 400, "INVALID_PARAMS")
    huge = b'{"content": "' + b"x" * (BODY_LIMIT * 4) + b'", "if_match": "a"}'
    structured(send(base, bearer, "PATCH", path, huge), 413, "INVALID_PARAMS")
    structured(send(base, bearer, "PATCH", path, iter([huge[:1000], huge[1000:]])), 413, "INVALID_PARAMS")
    for limit in ("²", "0", "-1", "1e3", "101", "abc"):
        structured(api(base, bearer, "GET", "/entries", params={"limit": limit}), 400, "INVALID_PARAMS")
    structured(api(base, bearer, "GET", "/search", params={"q": "x", "limit": "³"}), 400, "INVALID_PARAMS")
    structured(api(base, bearer, "GET", "/search", params={"q": "x", "min_score": "nan"}), 400, "INVALID_PARAMS")
    structured(api(base, bearer, "GET", "/entries", params={"cursor": "garbage"}), 400, "INVALID_PARAMS")
    structured(api(base, bearer, "POST", f"/conflicts/{entry['id']}/resolve", json={"choice": "merge"}), 400,
               "INVALID_PARAMS")
    structured(api(base, bearer, "POST", f"/conflicts/{entry['id']}/resolve",
                   json={"choice": "keep_original", "original_etag": entry["etag"]}), 400, "INVALID_PARAMS")
    structured(api(base, bearer, "GET", "/no-such-endpoint"), 404, "NOT_FOUND")
    structured(api(base, bearer, "PUT", path, json={}), 405, "INVALID_PARAMS")
    structured(api(base, None, "GET", "/no-such-endpoint"), 401, "FORBIDDEN")


async def test_merged_content_is_checked_like_any_write(server: tuple[str, Path]) -> None:
    base, _ = server
    bearer = token("merge-fuzzer", "sys1", "red")
    entry = await create(f"{base}/mcp", bearer, "one")
    second = api(base, bearer, "PATCH", f"/entries/{entry['id']}", json={"content": "two", "if_match": entry["etag"]})
    stale = api(base, bearer, "PATCH", f"/entries/{entry['id']}", json={"content": "three", "if_match": entry["etag"]})
    conflict_id = stale.json()["details"]["conflict_id"]
    etag = second.json()["entry"]["etag"]
    lone = b'{"choice": "merge", "original_etag": "' + etag.encode() + b'", "content": "bad \\ud800 half"}'
    structured(send(base, bearer, "POST", f"/conflicts/{conflict_id}/resolve", lone), 400, "INVALID_PARAMS")
    too_long = api(base, bearer, "POST", f"/conflicts/{conflict_id}/resolve",
                   json={"choice": "merge", "original_etag": etag, "content": "y" * 60_000})
    structured(too_long, 400, "INVALID_PARAMS")
    assert api(base, bearer, "GET", f"/entries/{entry['id']}").json()["entry"]["content"] == "two"


async def test_every_console_answer_carries_the_hardening_headers(server: tuple[str, Path]) -> None:
    base, _ = server
    bearer = token("headers", "sys1", "red")
    answers = [httpx.get(f"{base}/console/", timeout=30), httpx.get(f"{base}/console/console.js", timeout=30),
               httpx.get(f"{base}/console/nope.html", timeout=30), httpx.get(f"{base}/console", timeout=30),
               api(base, bearer, "GET", "/whoami"), api(base, None, "GET", "/whoami"),
               api(base, bearer, "GET", "/entries/unknown"), api(base, bearer, "GET", "/no-such-endpoint")]
    for answer in answers:
        csp = answer.headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in csp and "default-src 'self'" in csp, answer.url
        assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
        assert answer.headers.get("x-frame-options") == "DENY", answer.url
        assert answer.headers.get("x-content-type-options") == "nosniff", answer.url
    for answer in answers[4:]:
        assert answer.headers.get("cache-control") == "no-store", answer.url
        assert "access-control-allow-origin" not in answer.headers
    cookie = httpx.get(f"{base}/console/api/whoami", cookies={"token": bearer}, timeout=30)
    assert cookie.status_code == 401  # only the Authorization header signs in, so a forged page cannot


async def test_the_page_renders_stored_text_as_text_only() -> None:
    script = (Path(__file__).parents[2] / "server/agent_memory/console/static/console.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                 "javascript:"):
        assert sink not in script, sink
    page = (Path(__file__).parents[2] / "server/agent_memory/console/static/index.html").read_text()
    assert "<script>" not in page and not re.search(r"\son[a-z]+\s*=", page)  # no inline script or handler


async def test_operator_use_is_audited_even_when_it_fails_and_skills_come_first(server: tuple[str, Path]) -> None:
    base, data = server
    op = operator_token("op-failing")
    structured(api(base, op, "GET", "/entries/no-such-id"), 404, "NOT_FOUND")
    structured(send(base, op, "PATCH", "/entries/no-such-id", b"{", "text/plain"), 400, "INVALID_PARAMS")
    structured(api(base, op, "GET", "/no-such-endpoint"), 404, "NOT_FOUND")
    rows = audit_until(data, lambda r: len(r) >= 3, "--agent", "op-failing", "--action", "operator_access")
    assert {r["details"]["path"] for r in rows} == {"/console/api/entries/no-such-id", "/console/api/no-such-endpoint"}
    assert len(rows) == 3
    # a token without memory_crud is refused before the entry is even looked up (no read is audited)
    owner = token("skill-owner", "sys1", "red")
    entry = await create(f"{base}/mcp", owner, "needs crud to edit")
    searcher = token("skill-owner", "sys1", "red", skills=frozenset({Skill.RETRIEVE}))
    structured(api(base, searcher, "PATCH", f"/entries/{entry['id']}", json={"content": "x",
                                                                             "if_match": entry["etag"]}),
               403, "FORBIDDEN")
    structured(api(base, searcher, "DELETE", f"/entries/{entry['id']}", params={"if_match": entry["etag"]}),
               403, "FORBIDDEN")
    assert api(base, owner, "GET", f"/entries/{entry['id']}").status_code == 200  # one console read, audited last
    reads = audit_until(data, lambda r: any(x["tool"] == "console" for x in r), "--agent", "skill-owner",
                        "--action", "read")
    assert [r["tool"] for r in reads if r["tool"] == "console"] == ["console"], reads
