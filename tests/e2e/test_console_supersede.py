"""The memory console's view of supersede chains and its undo button (issue 23 item 2), sent in process
to the real HTTP app (`serve.http_app`) on SQLite and PostgreSQL: an entry's page says what it replaced
(`supersedes`) and what replaced it (`superseded_by`); `POST /console/api/entries/{id}/unsupersede`
`{if_match}` runs `memory_crud unsupersede` (same gate, same audit, tool `console`)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from starlette.testclient import TestClient

from agent_memory.config import Settings
from agent_memory.core.access.tokens import issue_token
from agent_memory.core.model.models import Caller, Skill, SystemType
from agent_memory.tools.server import create_server
from agent_memory.transports.serve import http_app
from tests.conftest import audit_rows, chosen_backends, make_settings
from tests.postgres import PostgresForTests

SECRET = "console-supersede-secret-0123456789"
BASE = "http://127.0.0.1:8765"
MISSING = "mem_01ZZZZZZZZZZZZZZZZZZZZZZZZ"


def bearer(agent_id: str, system_type: str = "sys1", team: str = "red", *, operator: bool = False) -> dict[str, str]:
    caller = Caller(agent_id, SystemType(system_type), team, frozenset(Skill), operator=operator)
    return {"Authorization": f"Bearer {issue_token(caller, SECRET.encode(), now=int(time.time()), ttl_seconds=3600)}"}


async def make_chains(settings: Settings) -> list[tuple[str, str]]:
    """Two (old, new) pairs of alice's facts, each old one superseded by the new one."""
    chains = []
    async with Client(create_server(settings)) as client:
        for n, (before, after) in enumerate([("8080", "8081"), ("5432", "5433")]):
            ids = []
            for step, port in enumerate((before, after)):
                done = await client.call_tool("memory_reflect", {
                    "action": "reflect", "session_id": f"s{n}{step}", "use_sampling": False,
                    "facts": [f"Service number {n} listens on port {port}."]})
                assert not done.is_error, done.structured_content
                ids.append(done.structured_content["items"][0]["id"])
            assert done.structured_content["superseded_ids"] == [ids[0]]
            chains.append((ids[0], ids[1]))
    return chains


@pytest.fixture(params=chosen_backends())
def console(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[TestClient, Settings, list]]:
    store: dict[str, object] = {}
    postgres: PostgresForTests | None = None
    if request.param == "postgres":
        postgres = request.getfixturevalue("postgres_server")
        store = {"backend": "postgres", "postgres_url": postgres.create_database()}
    settings = make_settings(tmp_path / "data", auth_secret=SECRET, **store)
    try:
        chains = anyio.run(make_chains, settings)
        with TestClient(http_app(settings), base_url=BASE) as client:
            yield client, settings, chains
    finally:
        if postgres is not None:
            postgres.drop_database(str(store["postgres_url"]))


def _entry(client: TestClient, entry_id: str, who: dict[str, str]) -> httpx.Response:
    return client.get(f"/console/api/entries/{entry_id}", headers=who)


def _undo(client: TestClient, entry_id: str, who: dict[str, str], body: Any) -> httpx.Response:
    return client.post(f"/console/api/entries/{entry_id}/unsupersede", headers=who, json=body)


def test_an_entry_shows_its_history_and_the_owner_undoes_a_supersede(console: tuple) -> None:
    client, settings, [(old, new), _] = console
    alice = bearer("alice")
    newer = _entry(client, new, alice).json()
    older = _entry(client, old, alice).json()
    assert newer["supersedes"] == [{"id": old, "created_at": older["entry"]["created_at"]}]
    assert newer["entry"]["superseded_by"] is None
    assert older["entry"]["superseded_by"] == new and older["supersedes"] == []
    etag = older["entry"]["etag"]
    # bad requests: no or a wrong etag, other fields, a current fact; nothing changes
    for body, status, code in (({}, 400, "INVALID_PARAMS"), ({"if_match": 7}, 400, "INVALID_PARAMS"),
                               ({"if_match": etag, "content": "x"}, 400, "INVALID_PARAMS"),
                               ({"if_match": "stale"}, 409, "CONFLICT")):
        answer = _undo(client, old, alice, body)
        assert answer.status_code == status and answer.json()["code"] == code, answer.text
        assert set(answer.json()) == {"code", "message", "details"}
    assert _undo(client, old, alice, {"if_match": "stale"}).json()["details"]["current_etag"] == etag
    current = _undo(client, new, alice, {"if_match": newer["entry"]["etag"]})
    assert current.status_code == 400 and current.json()["details"]["field"] == "id"
    # another agent of the team, or alice of another team: exactly as for an entry that does not exist
    for who in (bearer("bob", "sys5"), bearer("alice", "sys1", "blue")):
        real, fake = _undo(client, old, who, {"if_match": etag}), _undo(client, MISSING, who, {"if_match": etag})
        assert real.status_code == fake.status_code == 404
        assert real.text.replace(old, MISSING) == fake.text
    assert _entry(client, old, alice).json()["entry"]["etag"] == etag
    done = _undo(client, old, alice, {"if_match": etag})
    assert done.status_code == 200, done.text
    restored = done.json()["entry"]
    assert restored["superseded_by"] is None and restored["version"] == older["entry"]["version"] + 1
    assert restored["etag"] != etag
    assert _entry(client, new, alice).json()["supersedes"] == []
    trail = _entry(client, old, alice).json()["audit"]
    assert any(row["action"] == "unsupersede" and row["outcome"] == "ok" for row in trail)
    rows = [r for r in audit_rows(settings) if r["action"] == "unsupersede" and r["outcome"] == "ok"]
    assert [(r["entry_id"], r["tool"], r["agent_id"]) for r in rows] == [(old, "console", "alice")]
    assert new in str(rows[0]["details"])


def test_an_operator_undoes_any_supersede_audited_as_an_operator(console: tuple) -> None:
    client, settings, [_, (old, new)] = console
    operator = bearer("root-op", "sys4", "operators", operator=True)
    seen = _entry(client, new, operator).json()
    assert [fact["id"] for fact in seen["supersedes"]] == [old]
    etag = _entry(client, old, operator).json()["entry"]["etag"]
    done = _undo(client, old, operator, {"if_match": etag})
    assert done.status_code == 200 and done.json()["entry"]["superseded_by"] is None
    [row] = [r for r in audit_rows(settings) if r["action"] == "unsupersede" and r["outcome"] == "ok"]
    assert (row["entry_id"], row["agent_id"], row["tool"]) == (old, "root-op", "console")
    details = json.loads(row["details"]) if isinstance(row["details"], str) else row["details"]
    assert details == {"superseded_by": new, "version": details["version"], "operator": True}
    # only POST
    assert client.get(f"/console/api/entries/{old}/unsupersede", headers=operator).status_code == 405
