"""The text rule on the console's API, on a real `agent-memory serve --http` over SQLite and over
PostgreSQL alike: a query parameter (name or value) or a path parameter holding a NUL is refused
with 400 INVALID_PARAMS naming the field before any handler runs (PostgreSQL text cannot hold a
NUL: it used to answer 500 with a traceback), and text an older import stored with a lone
surrogate is answered escaped instead of failing every page that lists it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.servers import SECRET, agent_memory_command, free_port, running, server_env, token
from tests.e2e.test_console_api import create
from tests.postgres import PostgresForTests

pytestmark = pytest.mark.anyio


class Console:
    def __init__(self, base: str, data: Path, log: Path, backend: str) -> None:
        self.base, self.data, self.log, self.backend = base, data, log, backend

    def get(self, bearer: str, raw_path: str, method: str = "GET", **kwargs: object) -> httpx.Response:
        """`raw_path` (under /console/api) sent as written: its percent escapes reach the server."""
        return httpx.request(method, f"{self.base}/console/api{raw_path}", timeout=30,
                             headers={"Authorization": f"Bearer {bearer}"}, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def console(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    root = tmp_path_factory.mktemp(f"console-text-{request.param}")
    env = {"MEMORY_VECTOR_BACKEND": "none", "MEMORY_RATE_LIMIT_PER_SECOND": "0"}
    postgres: PostgresForTests | None = None
    url = ""
    if request.param == "postgres":
        postgres = request.getfixturevalue("postgres_server")
        url = postgres.create_database()
        env.update(MEMORY_BACKEND="postgres", MEMORY_POSTGRES_URL=url)
    port = free_port()
    log = root / "server.log"
    try:
        with running([agent_memory_command(), "serve", "--http", "--port", str(port)], port, log,
                     server_env(root / "data", MEMORY_AUTH_SECRET=SECRET, **env)):
            yield Console(f"http://127.0.0.1:{port}", root / "data", log, request.param)
    finally:
        if postgres is not None:
            postgres.drop_database(url)


def refused(answer: httpx.Response, field: str) -> None:
    assert answer.status_code == 400, (answer.status_code, answer.text)
    body = answer.json()
    assert set(body) == {"code", "message", "details"}, body
    assert body["code"] == "INVALID_PARAMS" and body["details"]["field"] == field, body
    assert "\x00" not in body["message"] and "Traceback" not in answer.text


def tracebacks(log: Path) -> list[str]:
    return [line for line in log.read_text(errors="replace").splitlines()
            if "console_failed" in line or "Traceback" in line]


async def test_a_nul_in_any_query_or_path_parameter_is_refused_naming_the_field(console: Console) -> None:
    bearer = token("nul-prober", "sys3", "red")
    entry = await create(f"{console.base}/mcp", bearer, "red plan", scope="team", namespace="red",
                         layer="long_term")
    entry_id = entry["id"]
    for query, field in (("owner=%00", "owner"), ("tags=%00", "tags"), ("tags=a,b%00", "tags"),
                         ("namespace=%00", "namespace"), ("namespace=red%00", "namespace"),
                         ("cursor=%00", "cursor"), ("scope=agent%00", "scope"), ("limit=1%00", "limit"),
                         ("layer=long_term&source=%00", "source")):
        refused(console.get(bearer, f"/entries?{query}"), field)
    refused(console.get(bearer, "/search?q=%00"), "q")
    refused(console.get(bearer, "/search?q=plan&mode=keyword%00"), "mode")
    refused(console.get(bearer, "/conflicts?cursor=%00"), "cursor")
    refused(console.get(bearer, "/entries?na%00me=x"), "na\\x00me")  # a parameter's name, written escaped
    refused(console.get(bearer, f"/entries/{entry_id}%00"), "entry_id")
    refused(console.get(bearer, f"/entries/{entry_id}%00", "PATCH", json={"content": "x", "if_match": entry["etag"]}),
            "entry_id")
    refused(console.get(bearer, f"/entries/{entry_id}%00?if_match={entry['etag']}", "DELETE"), "entry_id")
    refused(console.get(bearer, f"/entries/{entry_id}?if_match=%00", "DELETE"), "if_match")
    refused(console.get(bearer, "/conflicts/%00/resolve", "POST", json={"choice": "keep_original",
                                                                        "original_etag": "x"}), "entry_id")
    refused(console.get(bearer, "/no-such%00-endpoint"), "path")
    # nothing was changed, nothing failed, and the entry is still served as it was
    shown = console.get(bearer, f"/entries/{entry_id}")
    assert shown.status_code == 200 and shown.json()["entry"]["content"] == "red plan"
    listed = console.get(bearer, "/entries?namespace=red")
    assert [e["id"] for e in listed.json()["items"]] == [entry_id]
    assert tracebacks(console.log) == []


# PostgreSQL text cannot hold a lone surrogate: only an older SQLite store can have one
@pytest.mark.parametrize("console", ["sqlite"], indirect=True)
async def test_text_stored_with_a_lone_surrogate_is_answered_escaped(console: Console) -> None:
    bearer = token("surrogate-owner", "sys1", "red")
    entry = await create(f"{console.base}/mcp", bearer, "an entry imported long ago")
    # what an older import left behind: a tag holding a lone surrogate, written as the JSON escape
    # the store's tags column keeps (no UTF-8 text can hold one)
    with sqlite3.connect(console.data / "memory.db") as db:
        changed = db.execute("UPDATE entries SET tags = ? WHERE id = ?",
                             (json.dumps(["ok", "bad \ud800 half"]), entry["id"])).rowcount
    assert changed == 1
    pages = [console.get(bearer, "/entries"), console.get(bearer, f"/entries/{entry['id']}"),
             console.get(bearer, "/search?q=imported&mode=keyword")]
    for page in pages:
        assert page.status_code == 200, (page.url, page.text)
        page.content.decode("utf-8")  # strict UTF-8: the surrogate was escaped, not written
    listed = next(e for e in pages[0].json()["items"] if e["id"] == entry["id"])
    assert listed["tags"] == ["ok", "bad \\ud800 half"]
    assert pages[1].json()["entry"]["tags"] == ["ok", "bad \\ud800 half"]
    assert any(e["id"] == entry["id"] and e["tags"] == ["ok", "bad \\ud800 half"] for e in pages[2].json()["items"])
    # an edit of it is answered too, and the new tags replace the broken ones
    edited = console.get(bearer, f"/entries/{entry['id']}", "PATCH",
                         json={"tags": ["ok", "repaired"], "if_match": pages[1].json()["entry"]["etag"]})
    assert edited.status_code == 200, edited.text
    assert edited.json()["entry"]["tags"] == ["ok", "repaired"]
    assert tracebacks(console.log) == []
