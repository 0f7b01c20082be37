"""`agent-memory import --from FORMAT`, run as a real command against a data directory, then the
imported memories read through a real server: found by meaning and by keyword, with the right
scope, namespace, tags and dates, only where the permission gate lets a caller see them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client

from agent_memory.tools.server import create_server
from tests.conftest import Agent, identity, make_settings
from tests.e2e.servers import agent_memory_command, server_env

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "imports"
NOTES, KG, MEM0 = FIXTURES / "notes.jsonl", FIXTURES / "kg" / "memory.jsonl", FIXTURES / "mem0" / "get_all.json"
MARKDOWN, BASIC = FIXTURES / "markdown", FIXTURES / "basic-memory"


def run(data: Path, *args: str | Path, stdin: str = "", command: str = "import") -> subprocess.CompletedProcess[str]:
    env = server_env(data, MEMORY_AGENT_ID="alice", MEMORY_TEAM="red", MEMORY_VECTOR_BACKEND="none")
    return subprocess.run([agent_memory_command(), command, *map(str, args)], env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)


def summary(done: subprocess.CompletedProcess[str]) -> dict:
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout + done.stderr  # stdout holds the summary line only
    return json.loads(lines[0])


async def retrieve(agent: Agent, query: str, mode: str, **arguments: object) -> dict:
    from agent_memory.contracts.retrieve import MemoryRetrieveResult

    failed, data = await agent.call("memory_retrieve", MemoryRetrieveResult,
                                    {"query": query, "mode": mode, "min_score": 0, **arguments})
    assert not failed, data
    return data


async def found_by_meaning(agent: Agent, query: str, expected: str) -> dict:
    """The best semantic hit for `query`, once the vector index has the entries (bounded wait)."""
    with anyio.fail_after(120):
        while True:
            data = await retrieve(agent, query, "semantic", limit=3)
            if data["degraded"] is None and data["items"] and expected in data["items"][0]["content"]:
                return data["items"][0]
            await anyio.sleep(0.2)


async def test_every_format_is_found_by_meaning_and_keyword_with_its_fields(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for args in (["--from", "notes", NOTES], ["--from", "kg-jsonl", KG], ["--from", "mem0", MEM0],
                 ["--from", "markdown", MARKDOWN], ["--from", "basic-memory", BASIC, "--tag", "kb"]):
        done = run(data, *args)
        assert done.returncode == 1, done.stderr  # every fixture has bad items: reported, the rest imported
        assert summary(done)["imported"] > 0 and "import: done" in done.stderr
    settings = make_settings(data, vector_backend="chroma", retrieval_inline_embed_max=0)  # found = indexed
    async with Client(create_server(settings), mode="auto") as client:
        agent = Agent(client)  # alice, sys1, team red: the identity the imports were made for
        spanish = await found_by_meaning(agent, "Who can talk to our customers in Madrid in their language?",
                                         "Speaks fluent Spanish")
        assert spanish["tags"] == ["entity:John_Smith", "type:person"] and spanish["score_parts"]["semantic"] > 0
        food = await found_by_meaning(agent, "What should I avoid cooking for Alex?", "vegetarian")
        assert food["namespace"] == "alice/user/alex" and food["created_at"] == "2025-05-01T08:00:00.000000Z"
        runbook = await found_by_meaning(agent, "how do I safely bounce the background workers?", "job queue")
        assert runbook["tags"] == ["runbook", "queue"] and runbook["created_at"] == "2025-01-10T00:00:00.000000Z"
        coffee = await found_by_meaning(agent, "what water temperature for making coffee?", "Brewing Methods")
        assert coffee["tags"][:3] == ["kb", "coffee", "brewing"] and coffee["source"] == "import"

        keyword = await retrieve(agent, "pgbouncer", "keyword")
        note = keyword["items"][0]
        assert note["content"].startswith("Use pgbouncer") and note["score_parts"]["semantic"] == 0
        assert (note["tags"], note["priority"], note["layer"]) == (["postgres", "billing"], "high", "long_term")
        relation = (await retrieve(agent, "works_at Anthropic", "keyword"))["items"][0]
        assert relation["content"] == "John_Smith (person) works_at Anthropic (organization)"

        failed, read = await agent.crud(action="read", scope="agent", namespace="alice/user/alex",
                                        items=[{"id": food["id"]}])
        entry = read["items"][0]
        assert not failed and entry["id"].startswith("imp_") and entry["team"] == "red"
        assert (entry["owner_agent_id"], entry["updated_at"]) == ("alice", "2025-06-20T17:45:00.000000Z")
        assert entry["tags"] == ["user:alex", "food", "health"] and entry["version"] == 1
        failed, listed = await agent.crud(action="list", scope="agent",
                                          namespace="alice/user/alex/agent/travel-assistant/run/booking-2025-06")
        assert [i["content"] for i in listed["items"]] == ["Prefers window seats on long-haul flights"]


async def test_bad_items_are_reported_with_progress_and_a_reimport_adds_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = run(data, "--from", "kg-jsonl", KG, "--progress-every", "4")
    assert first.returncode == 1
    assert summary(first) == {"format": "kg-jsonl", "scope": "agent", "namespace": "alice", "team": "red",
                              "agent_id": "alice", "read": 15, "imported": 10, "already_stored": 0, "repeated": 1,
                              "bad": 4, "redacted": 0,
                              "landed": [{"scope": "agent", "namespace": "alice", "team": "red",
                                          "imported": 10, "already_stored": 0}]}
    err = first.stderr.splitlines()
    assert [line for line in err if line.startswith("import: ") and "entries (" in line] == [
        "import: 4/10 entries (4 new, 0 already stored)", "import: 8/10 entries (8 new, 0 already stored)",
        "import: 10/10 entries (10 new, 0 already stored)"]
    for expected in ('import: line 6: entity needs a non-empty string "entityType"',
                     'import: line 10: relation needs a non-empty string "to"',
                     "import: line 11: type must be \"entity\" or \"relation\", got 'observation'",
                     "import: line 5: the same memory as line 1, skipped",
                     "import: done, 10 entries imported, 0 already stored, 1 repeated, 4 bad skipped"):
        assert expected in err, first.stderr
    assert any(line.startswith("import: line 12: not JSON (") for line in err)

    again = run(data, "--from", "kg-jsonl", KG)
    assert summary(again)["imported"] == 0 and summary(again)["already_stored"] == 10
    stats = json.loads(run(data, command="stats").stdout)
    assert stats["entries"] == 10 and stats["vector_outbox_backlog"] == 10  # queued for the index, like any write
    audit = [json.loads(line) for line in run(data, "--action", "import", command="audit").stdout.splitlines()]
    assert len(audit) == 10 and {row["details"]["format"] for row in audit} == {"kg-jsonl"}
    assert audit[0]["details"]["where"] == "line 1" and audit[0]["agent_id"] == "operator"

    notes = run(data, "--from", "notes", stdin='{"content": "Standup moved to 09:45."}\n{"content": ""}\n')
    assert notes.returncode == 1 and summary(notes)["imported"] == 1
    assert "import: line 2: content must be a non-empty string" in notes.stderr
    clean = run(data, "--from", "notes", stdin='{"content": "Standup moved to 09:45."}\n')
    assert clean.returncode == 0 and summary(clean)["already_stored"] == 1  # the same note: not duplicated
    missing = run(data, "--from", "markdown", tmp_path / "nowhere")
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr and missing.stdout == ""
    assert run(data, "--from", "markdown").returncode == 2
    export_with_target = run(data, "--scope", "team", KG)  # export records keep their own place
    assert export_with_target.returncode == 2 and "--scope: only for --from notes" in export_with_target.stderr


async def test_a_team_import_lands_in_that_team_only_and_an_agent_import_with_its_owner(tmp_path: Path) -> None:
    data = tmp_path / "data"
    wrong = run(data, "--from", "basic-memory", BASIC, "--scope", "team", "--namespace", "blue/kb")
    assert wrong.returncode == 2 and "(set the team with --team blue)" in wrong.stderr and wrong.stdout == ""
    team = run(data, "--from", "basic-memory", BASIC, "--scope", "team", "--namespace", "red/kb")
    assert summary(team)["imported"] == 4 and summary(team)["team"] == "red"
    bob = run(data, "--from", "notes", NOTES, "--agent-id", "bob", "--team", "red", "--layer", "working")
    assert summary(bob)["namespace"] == "bob" and summary(bob)["imported"] == 4
    async with Client(create_server(make_settings(data)), mode="auto") as client:
        red = Agent(client, identity("carol", "sys1", "red"))
        blue = Agent(client, identity("dave", "sys4", "blue"))
        found = (await retrieve(red, "pour-over French press", "keyword"))["items"]
        assert [(i["scope"], i["namespace"]) for i in found] == [("team", "red/kb")]
        failed, read = await red.crud(action="read", scope="team", namespace="red/kb", items=[{"id": found[0]["id"]}])
        assert not failed and read["items"][0]["team"] == "red"
        assert (await retrieve(blue, "pour-over French press", "keyword"))["items"] == []
        failed, denied = await blue.crud(action="list", scope="team", namespace="red/kb")
        assert failed and denied["errors"][0]["code"] == "FORBIDDEN"

        mine = (await retrieve(Agent(client, identity("bob", "sys1", "red")), "pgbouncer", "keyword"))["items"]
        assert [(i["namespace"], i["owner_agent_id"], i["layer"]) for i in mine] == [("bob", "bob", "working")]
        for other in (identity("bob", "sys1", "blue"), identity("alice", "sys1", "red")):
            assert (await retrieve(Agent(client, other), "pgbouncer", "keyword"))["items"] == []
