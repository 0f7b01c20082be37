"""`agent-memory import --from memorynode` and `agent-memory erase` as deleteByScope (seeds/003),
run as the real commands on SQLite and PostgreSQL: legacy records land by scope level, bad ones are
reported with their place and skipped, what is not mapped is said per record, secrets are redacted,
and erasing a level removes only that level, with --cascade everything under it, with
--session-id one session."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.servers import agent_memory_command, server_env

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "memorynode_legacy.json"


@pytest.fixture(params=["sqlite", "postgres"])
def store_env(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    extra = {"MEMORY_AGENT_ID": "alice", "MEMORY_TEAM": "red", "MEMORY_VECTOR_BACKEND": "none"}
    if request.param == "postgres":
        extra |= {"MEMORY_BACKEND": "postgres", "MEMORY_POSTGRES_URL": request.getfixturevalue("postgres_url")}
    return server_env(tmp_path / "data", **extra)


def run(env: dict[str, str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([agent_memory_command(), *map(str, args)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def stored(env: dict[str, str]) -> dict[str, dict]:
    done = run(env, "export")
    assert done.returncode == 0, done.stderr
    return {record["content"][:20]: record for record in map(json.loads, done.stdout.splitlines())}


def test_legacy_records_land_by_level_and_bad_ones_are_reported(store_env: dict[str, str]) -> None:
    done = run(store_env, "import", "--from", "memorynode", FIXTURE)
    assert done.returncode == 1, done.stderr  # bad records: reported, the rest imported
    result = json.loads(done.stdout)
    assert (result["read"], result["imported"], result["bad"], result["redacted"], result["not_mapped"]) == (
        13, 6, 7, 1, 2)
    for said in ("import: record 6: content must be a non-empty string",
                 "import: record 7: scope has an unknown level 'tenant'",
                 "import: record 8: created_at must be an ISO-8601 date-time",
                 "import: record 9: provenance.confidence must be a number",
                 "import: record 1: access.read.userIds kept as tags read-user: (no user identities here",
                 "import: record 5: metadata.owner not mapped"):
        assert said in done.stderr, done.stderr
    landed = {(p["scope"], p["namespace"]): p["imported"] for p in result["landed"]}
    assert landed == {("agent", "alice"): 1, ("agent", "alice/org/acme/role/reviewer/project/billing"): 1,
                      ("team", "red/org/acme"): 1, ("team", "red/org/acme/project/billing"): 1,
                      ("team", "red/org/acme/role/reviewer"): 1,
                      ("team", "red/org/acme/role/reviewer/project/billing"): 1}
    entries = stored(store_env)
    session = entries["User prefers concise"]
    assert (session["layer"], session["session_id"], session["confidence"], session["created_at"],
            session["expires_at"]) == ("session", "s-42", 0.9, "2025-03-04T09:14:30.000000Z",
                                       "2025-04-03T09:14:30.000000Z")
    assert session["read_agents"] == ["planner", "coder"] and "source:chat" in session["tags"]  # exported too
    assert "sk-proj-" not in entries["The user pasted the "]["content"]  # redacted like every import
    again = run(store_env, "import", "--from", "memorynode", FIXTURE)
    assert json.loads(again.stdout)["already_stored"] == 6


def test_erase_maps_delete_by_scope_with_and_without_cascade(store_env: dict[str, str]) -> None:
    assert run(store_env, "import", "--from", "memorynode", FIXTURE).returncode == 1
    billing = "red/org/acme/role/reviewer/project/billing"
    # deleteByScope({project, role, org}, cascade: false): that level only
    plan = run(store_env, "erase", "--scope", "team", "--namespace", "red/org/acme/role/reviewer", "--dry-run")
    assert plan.returncode == 0 and len(plan.stdout.splitlines()) == 1, plan.stdout
    # deleteByScope({session, project, role, org}): one session, cascade does not matter
    other = run(store_env, "erase", "--scope", "agent", "--namespace", f"alice/{billing[4:]}", "--session-id",
                "s-other", "--yes")
    assert other.returncode == 0 and "nothing to erase in session s-other" in other.stderr
    session = run(store_env, "erase", "--scope", "agent", "--namespace", "alice", "--cascade", "--session-id",
                  "s-42", "--yes")
    assert session.returncode == 0 and "erased 1 entries" in session.stderr, session.stderr
    assert "User prefers concise" not in stored(store_env) and "The user pasted the " in stored(store_env)
    # deleteByScope({org}, cascade: false): org-level records only; cascade: true: everything under it
    alone = run(store_env, "erase", "--scope", "team", "--namespace", "red/org/acme", "--yes")
    assert alone.returncode == 0 and "erased 1 entries" in alone.stderr
    left = stored(store_env)
    assert "Acme's fiscal year s" not in left and "The billing service " in left
    under = run(store_env, "erase", "--scope", "team", "--namespace", "red/org/acme", "--cascade", "--yes")
    assert under.returncode == 0 and "erased 3 entries" in under.stderr, under.stderr
    assert list(stored(store_env)) == ["The user pasted the "]  # the agent's own session memory is not the team's
    bad = run(store_env, "erase", "--scope", "agent", "--namespace", "alice", "--session-id", "a b", "--yes")
    assert bad.returncode == 2 and "session_id must be" in bad.stderr
