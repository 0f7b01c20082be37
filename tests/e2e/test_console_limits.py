"""What the console's API shares with /mcp, on a real `agent-memory serve --http`: one rate-limit
budget per caller (console and MCP calls draw on the same bucket, operator tokens included), the
tool metrics (a console search is a `memory_retrieve` call, browsing and edits `memory_crud`
calls), the Host and Origin checks (DNS-rebinding protection, the same statuses), and a JSON
answer after the token check for every method."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.servers import http_client, http_server, token
from tests.e2e.test_console_api import api, create, operator_token

pytestmark = pytest.mark.anyio

BURST = 5  # each caller's budget: the bucket refills one call per 1,000 s, so none comes back mid-test


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("console-limits") / "data"
    with http_server(data, MEMORY_VECTOR_BACKEND="none", MEMORY_RATE_LIMIT_PER_SECOND="0.001",
                     MEMORY_RATE_LIMIT_BURST=str(BURST)) as url:
        yield url.removesuffix("/mcp"), data


def call(base: str, bearer: str | None, method: str, path: str, headers: dict[str, str]) -> httpx.Response:
    """`api` with extra request headers."""
    auth = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    return httpx.request(method, f"{base}/console/api{path}", headers={**auth, **headers}, timeout=30)


def rate_limited(answer: httpx.Response) -> float:
    assert answer.status_code == 429, (answer.status_code, answer.text)
    body = answer.json()
    assert body["code"] == "RATE_LIMITED" and set(body) == {"code", "message", "details"}, body
    wait = body["details"]["retry_after_seconds"]
    assert wait > 0 and int(answer.headers["retry-after"]) >= wait
    return float(wait)


async def test_console_and_mcp_calls_share_one_budget_per_caller(server: tuple[str, Path]) -> None:
    base, _ = server
    bearer = token("budgeted", "sys1", "red")
    async with http_client(f"{base}/mcp", bearer) as client:
        for _ in range(2):
            done = await client.call_tool("memory_retrieve", {"query": "anything", "mode": "keyword"})
            assert not done.is_error, done.structured_content
        for _ in range(BURST - 2):
            assert api(base, bearer, "GET", "/search", params={"q": "anything", "mode": "keyword"}).status_code == 200
        rate_limited(api(base, bearer, "GET", "/search", params={"q": "anything", "mode": "keyword"}))
        rate_limited(api(base, bearer, "GET", "/entries"))  # every console endpoint draws on the budget
        rate_limited(api(base, bearer, "GET", "/metrics"))
        after = await client.call_tool("memory_retrieve", {"query": "anything", "mode": "keyword"})
        assert after.is_error and after.structured_content["errors"][0]["code"] == "RATE_LIMITED"
    # another caller (and the same agent id in another team) has a budget of its own
    assert api(base, token("budgeted", "sys1", "blue"), "GET", "/entries").status_code == 200
    assert api(base, token("unhurried", "sys1", "red"), "GET", "/entries").status_code == 200


async def test_an_operator_token_is_limited_like_any_caller(server: tuple[str, Path]) -> None:
    base, _ = server
    op = operator_token("op-busy")
    for _ in range(BURST):
        assert api(base, op, "GET", "/entries").status_code == 200
    rate_limited(api(base, op, "GET", "/entries"))
    rate_limited(api(base, op, "GET", "/warnings"))


def tool_calls(snapshot: dict[str, Any], tool: str) -> tuple[int, dict[str, int]]:
    stats = snapshot["tools"]["tools"].get(tool, {"calls": 0, "outcomes": {}})
    return stats["calls"], stats["outcomes"]


async def test_console_calls_are_counted_as_the_tool_they_run(server: tuple[str, Path]) -> None:
    base, _ = server
    writer, reader, watcher = (token(name, "sys1", "red") for name in ("m-writer", "m-reader", "m-watcher"))
    entry = await create(f"{base}/mcp", writer, "metrics are counted per tool")
    before = api(base, watcher, "GET", "/metrics").json()
    assert api(base, reader, "GET", "/search", params={"q": "counted", "mode": "keyword"}).status_code == 200
    assert api(base, reader, "GET", "/search", params={"q": "tool", "mode": "keyword"}).status_code == 200
    assert api(base, reader, "GET", "/search", params={"q": "x", "limit": "0"}).status_code == 400
    assert api(base, writer, "GET", "/entries").status_code == 200
    assert api(base, writer, "GET", f"/entries/{entry['id']}").status_code == 200
    assert api(base, writer, "PATCH", f"/entries/{entry['id']}",
               json={"content": "edited", "if_match": entry["etag"]}).status_code == 200
    assert api(base, writer, "GET", "/whoami").status_code == 200  # no tool: not a tool call
    after = api(base, watcher, "GET", "/metrics").json()
    retrieve = [tool_calls(snapshot, "memory_retrieve") for snapshot in (before, after)]
    crud = [tool_calls(snapshot, "memory_crud") for snapshot in (before, after)]
    assert retrieve[1][0] - retrieve[0][0] == 3
    assert retrieve[1][1].get("ok", 0) - retrieve[0][1].get("ok", 0) == 2
    assert retrieve[1][1].get("INVALID_PARAMS", 0) - retrieve[0][1].get("INVALID_PARAMS", 0) == 1
    assert crud[1][0] - crud[0][0] == 3
    assert after["retrieval"]["retrievals"] - before["retrieval"]["retrievals"] == 2
    # a refused call is counted with its code, as over MCP
    for _ in range(BURST - 3):
        api(base, reader, "GET", "/search", params={"q": "x"})
    rate_limited(api(base, reader, "GET", "/search", params={"q": "x"}))
    # memory://metrics says the same as the console's metrics panel
    async with http_client(f"{base}/mcp", token("m-resource", "sys1", "red")) as client:
        resource = json.loads((await client.read_resource("memory://metrics")).contents[0].text)
    panel = api(base, token("m-panel", "sys1", "red"), "GET", "/metrics").json()
    assert resource["tools"] == panel["tools"]["tools"]
    assert panel["tools"]["tools"]["memory_retrieve"]["outcomes"].get("RATE_LIMITED", 0) >= 1


async def test_every_method_is_signed_in_first_then_answered_as_json(server: tuple[str, Path]) -> None:
    base, _ = server
    # every method the HTTP parser accepts, known to the API or not
    for method in ("TRACE", "PROPFIND", "CONNECT", "MKCOL", "LOCK", "PURGE", "SEARCH", "REPORT", "PUT", "OPTIONS"):
        bearer = token(f"methodical-{method.lower()}", "sys1", "red")  # one budget per caller
        unsigned = api(base, None, method, "/entries")
        assert unsigned.status_code == 401, (method, unsigned.status_code, unsigned.text)
        assert unsigned.json()["code"] == "FORBIDDEN"
        wrong = api(base, bearer, method, "/entries")
        assert wrong.status_code == 405, (method, wrong.status_code, wrong.text)
        assert wrong.json()["code"] == "INVALID_PARAMS" and wrong.json()["details"]["allowed"] == ["GET"]
        assert wrong.headers["allow"] == "GET" and wrong.headers["cache-control"] == "no-store"
        on_entry = api(base, bearer, method, "/entries/some-id")
        assert on_entry.status_code == 405 and on_entry.headers["allow"] == "DELETE, GET, PATCH", method
        unknown = api(base, bearer, method, "/no-such-endpoint")
        assert unknown.status_code == 404 and unknown.json()["code"] == "NOT_FOUND", method


def mcp_post(base: str, bearer: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{base}/mcp", timeout=30, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                      headers={"Authorization": f"Bearer {bearer}", "Accept": "application/json, text/event-stream",
                               **headers})


async def test_the_console_checks_host_and_origin_as_mcp_does(server: tuple[str, Path]) -> None:
    base, _ = server
    port = base.rsplit(":", 1)[1]
    refusals = ({"Host": f"attacker.example:{port}"}, {"Host": "attacker.example"}, {"Host": f"127.0.0.2:{port}"},
                {"Origin": "http://attacker.example"}, {"Origin": f"http://attacker.example:{port}"})
    for number, headers in enumerate(refusals):
        mcp = mcp_post(base, token(f"host-mcp-{number}", "sys1", "red"), headers)
        assert mcp.status_code in (421, 403), (headers, mcp.status_code, mcp.text)
        bearer = token(f"host-{number}", "sys1", "red")
        for answer in (call(base, bearer, "GET", "/whoami", headers), call(base, None, "GET", "/whoami", headers),
                       call(base, bearer, "TRACE", "/entries", headers),
                       httpx.get(f"{base}/console/", headers=headers, timeout=30),
                       httpx.get(f"{base}/console/console.js", headers=headers, timeout=30)):
            assert answer.status_code == mcp.status_code, (headers, answer.url, answer.status_code, answer.text)
            body = answer.json()
            assert body["code"] == ("INVALID_PARAMS" if mcp.status_code == 421 else "FORBIDDEN"), body
            assert body["details"]["field"] == ("host" if mcp.status_code == 421 else "origin"), body
            assert answer.headers.get("x-frame-options") == "DENY"
    # the names of this machine's loopback, with the port, are answered as on /mcp
    for allowed in ({"Host": f"localhost:{port}"}, {"Host": f"127.0.0.1:{port}"},
                    {"Origin": f"http://localhost:{port}"}, {"Origin": f"http://127.0.0.1:{port}"}):
        assert mcp_post(base, token("host-ok-mcp", "sys1", "red"), allowed).status_code not in (421, 403), allowed
        assert call(base, token("host-ok", "sys1", "red"), "GET", "/whoami", allowed).status_code == 200
        assert httpx.get(f"{base}/console/", headers=allowed, timeout=30).status_code == 200
