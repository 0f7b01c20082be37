"""Property-based fuzzing of the console's API: random methods (made-up ones too, which uvicorn's
httptools parser would refuse before any app sees them), paths, query strings, bodies, tokens and
Host/Origin headers, sent in process to the real HTTP app (`serve.http_app`, MCP and console, its
lifespan opening a real SQLite store in tmp_path, or a real PostgreSQL database), over entries and
a conflict made beforehand through the MCP tools.

The property, for every request: the answer is JSON (strict UTF-8), an error is exactly
`{code, message, details}` with a SPEC code and never INTERNAL, the status matches the code, no
traceback reaches the client, and nothing is logged at error level; afterwards the console still
answers a normal request. Examples: `AGENT_MEMORY_FUZZ_EXAMPLES` (default 300, derandomized so a
run repeats itself; `AGENT_MEMORY_FUZZ_RANDOM=1` draws fresh ones)."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import anyio
import pytest
import structlog
from hypothesis import HealthCheck, given, settings, strategies as st
from mcp import Client
from starlette.testclient import TestClient

from agent_memory.config import Settings
from agent_memory.core.access.tokens import issue_token
from agent_memory.core.model.models import Caller, Skill, SystemType
from agent_memory.tools.server import create_server
from agent_memory.transports.serve import http_app
from tests.conftest import make_settings
from tests.postgres import PostgresForTests
from tests.schema_strategies import LONE_SURROGATES, weighted

SECRET = "fuzz-console-secret-0123456789"
BASE = "http://127.0.0.1:8765"
CODES = {"INVALID_PARAMS": {400, 405, 413, 421}, "FORBIDDEN": {401, 403}, "NOT_FOUND": {404}, "CONFLICT": {409},
         "RATE_LIMITED": {429}, "NOT_IMPLEMENTED": {501}}
FUZZ = settings(max_examples=int(os.environ.get("AGENT_MEMORY_FUZZ_EXAMPLES", "300")), deadline=None,
                derandomize=os.environ.get("AGENT_MEMORY_FUZZ_RANDOM") != "1", database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def bearer(agent_id: str, *, operator: bool = False, skills: frozenset[Skill] = frozenset(Skill)) -> str:
    caller = Caller(agent_id, SystemType.SYS3, "red", skills, operator=operator)
    return issue_token(caller, SECRET.encode(), now=int(time.time()), ttl_seconds=3600)


@dataclass
class Made:
    ids: list[str]
    etags: list[str]


async def make_entries(store: Settings) -> Made:
    """Entries of alice (team red), one of them edited twice from the same etag: a conflict."""
    async with Client(create_server(store)) as client:
        made = await client.call_tool("memory_crud", {"action": "create", "items": [
            {"content": "fuzz alpha", "tags": ["a", "b"]}, {"content": "fuzz beta"}]})
        items = made.structured_content["items"]
        first = items[0]
        edited = await client.call_tool("memory_crud", {"action": "update", "items": [
            {"id": first["id"], "content": "fuzz alpha 2", "if_match": first["etag"]}]})
        stale = await client.call_tool("memory_crud", {"action": "update", "items": [
            {"id": first["id"], "content": "fuzz alpha 3", "if_match": first["etag"]}]})
        conflict = stale.structured_content["errors"][0]["details"]["conflict_id"]
        return Made([first["id"], items[1]["id"], conflict],
                    [first["etag"], edited.structured_content["items"][0]["etag"], items[1]["etag"]])


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def console(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[TestClient, Made, list[dict[str, Any]]]]:
    data = tmp_path_factory.mktemp(f"console-fuzz-{request.param}") / "data"
    postgres: PostgresForTests | None = None
    store: dict[str, object] = {}
    if request.param == "postgres":
        postgres = request.getfixturevalue("postgres_server")
        store = {"backend": "postgres", "postgres_url": postgres.create_database()}
    seen: list[dict[str, Any]] = []

    def keep(logger: object, method: str, event: dict[str, Any]) -> dict[str, Any]:
        seen.append({"level": method, **{k: str(v)[:300] for k, v in event.items()}})
        raise structlog.DropEvent

    before = structlog.get_config()["processors"]
    structlog.configure(processors=[keep, *before])
    try:
        made = anyio.run(make_entries, make_settings(data, **store))
        app = http_app(make_settings(data, auth_secret=SECRET, http_max_request_bytes=16 * 1024, **store))
        with TestClient(app, base_url=BASE, raise_server_exceptions=False) as client:
            yield client, made, seen
    finally:
        structlog.configure(processors=before)
        if postgres is not None:
            postgres.drop_database(str(store["postgres_url"]))


TEXT = st.one_of(st.text(max_size=12), st.sampled_from(["\x00", "a\x00b", "..", "../..", "%", "é" * 40, "\ufeff",
                                                        "x" * 3000, "red", "red/ops", "true", "0", "-1", "nan"]))
PARAMS = ["scope", "namespace", "layer", "tags", "source", "owner", "conflict", "superseded", "cursor", "limit",
          "q", "mode", "min_score", "if_match"]
PATHS = {"/whoami": ["GET"], "/entries": ["GET"] * 3, "/entries/{id}": ["GET", "PATCH", "DELETE"] * 2,
         "/conflicts": ["GET"], "/conflicts/{id}/resolve": ["POST"] * 3, "/search": ["GET"] * 3, "/metrics": ["GET"],
         "/warnings": ["GET"], "/{text}": ["GET"], "/{text}/{text}": ["GET"], "": ["GET"], "/": ["GET"]}
TEMPLATES = [template for template, weight in PATHS.items() for _ in weight]
OTHER_METHODS = st.one_of(st.sampled_from(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE",
                                           "PROPFIND", "CONNECT"]), st.from_regex(r"\A[A-Z][A-Z_-]{0,11}\Z"))
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | TEXT
                           | st.sampled_from(LONE_SURROGATES),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                           max_leaves=12)
BODY_KEYS = ["content", "tags", "priority", "confidence", "layer", "expires_at", "if_match", "choice",
             "original_etag", "owner_agent_id"]


def segment(text: str) -> str:
    """`text` as one path segment, dots escaped too: a client would resolve `..` before sending."""
    return quote(text, safe="").replace(".", "%2E")


@st.composite
def requests(draw: st.DrawFn, made: Made) -> tuple[str, str, dict[str, str], bytes | None]:
    ids = st.one_of(st.sampled_from(made.ids), st.sampled_from(made.ids), TEXT)
    template = draw(st.sampled_from(TEMPLATES))
    # mostly a method the path takes, so most requests reach a handler
    method = draw(weighted((85, st.sampled_from(PATHS[template])), (15, OTHER_METHODS)))
    while "{id}" in template or "{text}" in template:
        template = template.replace("{id}", segment(draw(ids)), 1).replace("{text}", segment(draw(TEXT)), 1)
    values = weighted((40, TEXT), (60, st.sampled_from(made.etags + ["agent", "team", "long_term", "keyword",
                                                                      "hybrid", "10", "red", "a", "alice"])))
    pairs = draw(st.lists(st.tuples(weighted((80, st.sampled_from(PARAMS)), (20, TEXT)), values), max_size=3))
    query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)
    query = draw(st.sampled_from([query, query, "%ff%fe=%ed%a0%80", "a=%zz&&=&b", "limit=1&limit=2"]))
    path = f"/console/api{template}" + (f"?{query}" if query else "")
    tokens = [bearer("alice")] * 10 + [bearer("op", operator=True)] * 3 + [bearer("nobody", skills=frozenset()),
                                                                         "", "am1.e30.AAAA", "garbage"]
    token = draw(st.sampled_from(tokens))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    headers.update(draw(st.sampled_from([{}] * 12 + [{"Host": "attacker.example"}, {"Origin": "http://evil.example"},
                                                      {"Content-Type": "text/plain"}])))
    body: bytes | None = None
    kind = draw(st.sampled_from(["none", "object", "object", "value", "bytes"]))
    if kind == "object":
        value = draw(st.dictionaries(st.sampled_from(BODY_KEYS) | TEXT,
                                     JSON_VALUES | st.sampled_from(made.etags + ["merge", "keep_original",
                                                                                  "take_this"]), max_size=5))
        body = json.dumps(value).encode()
    elif kind == "value":
        body = json.dumps(draw(JSON_VALUES)).encode()
    elif kind == "bytes":
        body = draw(st.binary(max_size=64) | st.sampled_from([b"{" * 5000, b'{"content": "' + b"x" * 20_000 + b'"}']))
    return method, path, headers, body


def check(method: str, answer: Any) -> None:
    assert answer.status_code != 500 and answer.status_code != 503, answer.text
    assert answer.headers.get("content-type", "").startswith("application/json"), (answer.status_code,
                                                                                    answer.headers, answer.text)
    assert answer.headers.get("x-frame-options") == "DENY"
    if method == "HEAD":
        return
    text = answer.content.decode("utf-8")  # strict: no lone surrogate was written
    assert "Traceback" not in text and 'File "' not in text
    body = json.loads(text)
    assert isinstance(body, dict)
    if answer.status_code >= 400:
        assert set(body) == {"code", "message", "details"}, body
        assert answer.status_code in CODES[body["code"]], (answer.status_code, body)
        if answer.status_code == 405:
            assert answer.headers["allow"] and body["details"]["allowed"]


# The server runs in a thread beside the draws, and its PostgreSQL pool and background jobs use the
# `random` module meanwhile: Hypothesis would take that for a strategy using it.
@pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies"
                            ":hypothesis.errors.HypothesisDeprecationWarning")
def test_every_console_answer_is_json_with_a_spec_code(console: tuple[TestClient, Made, list[dict[str, Any]]]
                                                       ) -> None:
    client, made, seen = console
    statuses: Counter[int] = Counter()

    @FUZZ
    @given(st.data())
    def fuzz(data: st.DataObject) -> None:
        method, path, headers, body = data.draw(requests(made))
        answer = client.request(method, path, headers=headers, content=body)
        check(method, answer)
        statuses[answer.status_code] += 1
        failures = [e for e in seen if e["level"] in ("error", "exception", "critical")]
        seen.clear()
        assert not failures, failures

    fuzz()
    if FUZZ.max_examples >= 100:  # the draws reached the handlers, not only the refusals in front of them
        assert {200, 400, 401, 404, 405} <= set(statuses), statuses
    answer = client.get("/console/api/entries", headers={"Authorization": f"Bearer {bearer('alice')}"})
    assert answer.status_code == 200 and {e["id"] for e in answer.json()["items"]} >= set(made.ids[:2])
