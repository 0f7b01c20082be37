"""Hostile and broken input to `agent-memory import`, run as the real command on SQLite and on
PostgreSQL: text no store can hold (a NUL, a lone surrogate, bytes that are not UTF-8), front
matter nested hundreds of levels deep, export records no write could have made. Each bad item is
reported with its place and skipped, the rest is imported, the exit code is the documented one,
no traceback reaches the user, both stores answer alike, and the store can be exported after."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from agent_memory.application.import_writer import ImportTally, write_entries
from agent_memory.bootstrap import open_records
from agent_memory.core.model.models import Scope
from tests.conftest import make_settings
from tests.e2e.servers import agent_memory_command, server_env
from tests.storage.stores import stored

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["sqlite", "postgres"])
def store_env(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """The environment of a command on a fresh store of either kind, as alice of team red."""
    extra = {"MEMORY_AGENT_ID": "alice", "MEMORY_TEAM": "red", "MEMORY_VECTOR_BACKEND": "none"}
    if request.param == "postgres":
        extra |= {"MEMORY_BACKEND": "postgres", "MEMORY_POSTGRES_URL": request.getfixturevalue("postgres_url")}
    return server_env(tmp_path / "data", **extra)


def run(env: dict[str, str], *args: str | Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    done = subprocess.run([agent_memory_command(), *map(str, args)], env=env, input=stdin, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def summary(done: subprocess.CompletedProcess[str]) -> dict:
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout + done.stderr
    return json.loads(lines[0])


def jsonl(*values: object) -> str:
    return "".join(json.dumps(value) + "\n" for value in values)  # "\u0000" and "\ud800" as JSON escapes


def record(entry_id: str, **fields: object) -> dict:
    """An export record as `agent-memory export` writes it (alice's agent memory of team red)."""
    stamp = "2026-01-02T03:04:05.000000Z"
    return {"id": entry_id, "scope": "agent", "namespace": "alice", "team": "red", "owner_agent_id": "alice",
            "content": f"fact {entry_id}", "tags": [], "priority": "medium", "source": "manual", "confidence": 1.0,
            "layer": "long_term", "created_at": stamp, "updated_at": stamp, "expires_at": None, "version": 1,
            "etag": f"etag-{entry_id}", "conflict": False, "conflict_of": None, "session_id": None,
            "promoted_from": None, "compacted": False, "superseded_by": None} | fields


def exported(env: dict[str, str]) -> list[dict]:
    done = run(env, "export")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_nul_and_lone_surrogates_are_bad_items_in_every_line_format_and_the_rest_is_imported(
        store_env: dict[str, str]) -> None:
    notes = run(store_env, "import", "--from", "notes", stdin=jsonl(
        {"content": "Standup is at 09:45."}, {"content": "before\u0000after"}, {"content": "ok", "tags": ["\ud800"]},
        {"content": "dated", "created_at": "2025-01-01\u0000"}, {"content": "Deploys freeze on Fridays."}))
    assert notes.returncode == 1 and summary(notes)["imported"] == 2 and summary(notes)["bad"] == 3
    for said in ("import: line 2: content holds a NUL character (U+0000)",
                 "import: line 3: tags[0] holds a lone surrogate (U+D800..U+DFFF)",
                 "import: line 4: created_at holds a NUL character"):
        assert said in notes.stderr

    graph = run(store_env, "import", "--from", "kg-jsonl", stdin=jsonl(
        {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["writes compilers", "a\u0000b"]},
        {"type": "relation", "from": "Ada", "to": "B\ud800", "relationType": "knows"},
        {"type": "relation", "from": "Ada", "to": "Bob", "relationType": "mentors"}))
    assert graph.returncode == 1 and summary(graph)["imported"] == 2 and summary(graph)["bad"] == 2
    assert "import: line 1: content holds a NUL character" in graph.stderr
    assert "import: line 2: content holds a lone surrogate" in graph.stderr

    mem0 = run(store_env, "import", "--from", "mem0", stdin=json.dumps({"results": [
        {"id": "m1", "memory": "Likes green tea", "user_id": "sam"},
        {"id": "m2", "memory": "x\ud83d", "user_id": "sam"},
        {"id": "m3", "memory": "Lives in Lyon", "user_id": "s\u0000m"}]}))
    assert mem0.returncode == 1 and summary(mem0)["imported"] == 1 and summary(mem0)["bad"] == 2
    assert "import: record 2: content holds a lone surrogate" in mem0.stderr
    assert "import: record 3: tags[0] holds a NUL character" in mem0.stderr

    lines = jsonl(record("mem_good"), record("mem_nul", content="a\u0000b"), record("mem_sur", etag="\udfff"))
    strict = run(store_env, "import", stdin=lines)
    assert strict.returncode == 1 and "import: 2 bad lines; nothing imported" in strict.stderr
    assert "import: line 2: content holds a NUL character" in strict.stderr
    assert "import: line 3: etag holds a lone surrogate" in strict.stderr
    skipped = run(store_env, "import", "--skip-bad", stdin=lines)
    assert skipped.returncode == 1 and "import: done, 1 entries imported, 2 bad lines skipped" in skipped.stderr

    contents = sorted(entry["content"] for entry in exported(store_env))
    assert contents == sorted(["Standup is at 09:45.", "Deploys freeze on Fridays.", "Ada (person): writes compilers",
                               "Ada (person) mentors Bob", "Likes green tea", "fact mem_good"])


def test_export_records_are_checked_like_writes_and_each_bad_one_is_named(store_env: dict[str, str]) -> None:
    blue = record("mem_blue", scope="team", namespace="blue", team="blue")
    assert run(store_env, "import", stdin=jsonl(blue)).returncode == 0  # already stored: another team's entry
    lines = [
        record("mem_ok"),
        record("mem_1", scope="team", namespace="blue", team="red"),
        record("mem_2", owner_agent_id="bob"),
        record("mem_3", owner_agent_id=""),
        record("mem_4", owner_agent_id="<b>alice</b>"),
        record("mem_5", team="red%"),
        record("mem_6", conflict=True, conflict_of="mem_red"),
        record("mem_7", superseded_by="mem_blue"),
        record("mem_8", version=2**64),
        record("mem_9", version=2**31),
        record("mem_10", namespace="alice\n"),
        record("mem_red", scope="team", namespace="red/ops", team="red"),
        record("mem_console", conflict=True, conflict_of="mem_ok", owner_agent_id="ann"),  # an operator's conflict
        record("mem_gone", superseded_by="mem_deleted_long_ago"),
    ]
    text = jsonl(*lines)
    strict = run(store_env, "import", stdin=text)
    assert strict.returncode == 1 and "import: 10 bad lines; nothing imported" in strict.stderr
    assert [entry["id"] for entry in exported(store_env)] == ["mem_blue"]
    for said in ("line 2: a team-scope entry belongs to the team its namespace starts with: namespace blue is team "
                 "blue's, not team red's",
                 "line 3: an agent-scope entry belongs to the agent its namespace starts with: namespace alice is "
                 "agent alice's, not agent bob's",
                 "line 4: owner_agent_id must be 1-128 characters of [A-Za-z0-9._-]", "got an empty string",
                 "line 5: owner_agent_id must be", "line 6: team must be 1-128 characters",
                 "line 7: conflict_of names an entry in another place than this entry's (team red/ops, team red)",
                 "line 8: superseded_by names an entry in another place than this entry's (team blue, team blue)",
                 "line 9: version must be between 1 and 2147483647", "line 10: version must be between 1 and",
                 "line 11: namespace must be '/'-separated segments"):
        assert said in strict.stderr

    skipped = run(store_env, "import", "--skip-bad", stdin=text)
    assert skipped.returncode == 1 and "import: done, 4 entries imported, 10 bad lines skipped" in skipped.stderr
    assert [entry["id"] for entry in exported(store_env)] == ["mem_blue", "mem_ok", "mem_red", "mem_console",
                                                                "mem_gone"]


def test_front_matter_nested_500_levels_deep_is_one_bad_file_and_the_folder_is_imported(
        store_env: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "deep.md").write_text("---\ntags: " + "[" * 500 + "]" * 500 + "\n---\n# Deep\n\nbody\n")
    (folder / "deeper.md").write_text("---\n" + "".join(f"{' ' * n}k{n}:\n" for n in range(200)) + "---\nbody\n")
    (folder / "fine.md").write_text("---\ntags: [ops]\n---\n# Runbook\n\nRestart the queue workers one by one.\n")
    for fmt in ("markdown", "basic-memory"):
        done = run(store_env, "import", "--from", fmt, folder)
        assert done.returncode == 1 and summary(done)["imported"] == 1 and summary(done)["bad"] == 2
        assert "import: deep.md: front matter is nested more than 32 levels deep" in done.stderr
        assert "import: deeper.md: front matter is nested more than 32 levels deep" in done.stderr


def test_notes_placed_elsewhere_by_their_own_fields_are_counted_where_they_landed(store_env: dict[str, str]) -> None:
    notes = jsonl({"content": "Mine."}, {"content": "The team's.", "scope": "team", "namespace": "red/kb"},
                  {"content": "For everyone.", "scope": "global", "layer": "long_term"},
                  {"content": "Elsewhere.", "namespace": "alice/drafts"})
    done = run(store_env, "import", "--from", "notes", stdin=notes)
    assert done.returncode == 0, done.stderr
    assert summary(done)["landed"] == [
        {"scope": "agent", "namespace": "alice", "team": "red", "imported": 1, "already_stored": 0},
        {"scope": "agent", "namespace": "alice/drafts", "team": "red", "imported": 1, "already_stored": 0},
        {"scope": "global", "namespace": "global", "team": None, "imported": 1, "already_stored": 0},
        {"scope": "team", "namespace": "red/kb", "team": "red", "imported": 1, "already_stored": 0}]
    assert "import: in team red/kb (team red): 1 imported, 0 already stored" in done.stderr
    assert "import: in global global: 1 imported, 0 already stored" in done.stderr
    again = run(store_env, "import", "--from", "notes", stdin=notes)
    assert [place["already_stored"] for place in summary(again)["landed"]] == [1, 1, 1, 1]


def test_lines_that_are_not_utf8_are_bad_lines_and_the_rest_is_imported(store_env: dict[str, str],
                                                                        tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_bytes(b'{"content": "caf\xe9 in latin-1"}\n{"content": "Plain ASCII note."}\n')
    done = run(store_env, "import", "--from", "notes", notes)
    assert done.returncode == 1 and summary(done)["imported"] == 1
    assert "import: line 1: not UTF-8 text" in done.stderr
    records = tmp_path / "export.jsonl"
    records.write_bytes(jsonl(record("mem_ok")).encode() + b'{"id": "mem_\xed\xa0\x80"}\n')
    strict = run(store_env, "import", records)
    assert strict.returncode == 1 and "import: line 2: not UTF-8 text" in strict.stderr
    assert "nothing imported" in strict.stderr


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_an_entry_the_store_itself_refuses_is_a_bad_item_and_the_rest_of_its_batch_is_stored(
        tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    """The checks keep such entries out before; should one slip through, the store's refusal is
    told apart per entry (each tried alone, rolled back) instead of losing the batch."""
    overrides = {"backend": "postgres", "postgres_url": request.getfixturevalue("postgres_url")} \
        if backend == "postgres" else {}
    settings = make_settings(tmp_path / "data", **overrides)
    good = [stored(Scope.AGENT, "alice", content=f"fact {n}") for n in range(3)]
    unholdable = replace(good[0], id="mem_unholdable", content="a\x00b\ud800")  # neither store can hold it
    placed = [("line 1", good[0]), ("line 2", unholdable), ("line 3", good[1]), ("line 4", good[2])]
    async with open_records(settings) as records:
        tally = await write_entries(records.repo, records.operator, placed, ImportTally(read=4), fmt="notes",
                                    failures=records.failures, redactor=records.redactor)
        assert await records.operator.stored_ids([e.id for _, e in placed]) == {e.id for e in good}
    assert (tally.imported, tally.present) == (3, 0)
    assert [(where, why.startswith("the store refused it (")) for where, why in tally.bad] == [("line 2", True)]
