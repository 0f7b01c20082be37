"""The MemoryNode reader (seeds/003, v2 and legacy aliases) and where its records land, on
tests/fixtures/memorynode_legacy.json: scope levels to scopes and namespaces, provenance,
retention and read lists kept, and every record it cannot take reported with its place."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.core.model.models import Domain, Layer, Scope
from agent_memory.core.model.rules import Limits
from agent_memory.importers import read_lines
from agent_memory.importers.drafts import Bad, Draft
from agent_memory.importers.placement import Target, place

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "memorynode_legacy.json"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
TARGET = Target("memorynode", Scope.AGENT, "alice", "red", "alice")


def read(text: str) -> tuple[list[Draft], dict[str, str]]:
    items = list(read_lines("memorynode", text.splitlines(keepends=True)))
    return [i for i in items if isinstance(i, Draft)], {i.where: i.why for i in items if isinstance(i, Bad)}


def test_the_fixture_lands_by_scope_level_with_provenance_and_retention() -> None:
    drafts, bad = read(FIXTURE.read_text(encoding="utf-8"))
    assert bad == {"record 6": "content must be a non-empty string",
                   "record 7": "scope has an unknown level 'tenant' (known: session, project, role, org)",
                   "record 9": 'provenance.confidence must be a number, got "high"',
                   "record 10": "scope must be an object of session, project, role, org",
                   "record 11": "scopeLevel is 'project' but scope has no project",
                   "record 13": "not a JSON object"}
    entries = {d.where: place(d, TARGET, Limits(), NOW) for d in drafts if d.where != "record 8"}
    with pytest.raises(ValueError, match="created_at must be an ISO-8601 date-time.*'last tuesday'"):
        place(next(d for d in drafts if d.where == "record 8"), TARGET, Limits(), NOW)

    session = entries["record 1"]  # session level: the agent's own memory, session layer
    assert (session.scope, session.namespace, session.team, session.layer, session.session_id) == (
        Scope.AGENT, "alice/org/acme/role/reviewer/project/billing", "red", Layer.SESSION, "s-42")
    assert (session.created_at, session.updated_at, session.confidence) == (
        "2025-03-04T09:14:30.000000Z", "2025-03-05T10:00:00.000000Z", 0.9)
    assert session.expires_at == "2025-04-03T09:14:30.000000Z"  # ttlSec 30 days from the provenance timestamp
    assert session.domain is Domain.USER_PREF  # the field, not a tag
    assert session.tags == ("org:acme", "role:reviewer", "project:billing", "session:s-42",
                            "source:chat", "read-user:u-7")
    assert session.read_agents == ("planner", "coder")  # access.read.agentIds: the entry's read list
    assert session.source.value == "import" and session.owner_agent_id == "alice"

    project = entries["record 2"]  # project, role and org levels: the team's memory, a path per level
    assert (project.scope, project.namespace, project.team, project.layer, project.session_id) == (
        Scope.TEAM, "red/org/acme/role/reviewer/project/billing", "red", Layer.LONG_TERM, None)
    assert (project.expires_at, project.confidence) == ("2030-01-01T00:00:00.000000Z", 0.75)
    assert entries["record 3"].namespace == "red/org/acme/role/reviewer"
    org = entries["record 4"]  # no scopeLevel: the most specific level present; epoch milliseconds
    assert (org.namespace, org.created_at) == ("red/org/acme", "2025-01-10T08:00:00.000000Z")

    legacy = entries["record 5"]  # sourceId, confidenceScore, ttlSec
    assert (legacy.namespace, legacy.confidence, legacy.expires_at) == (
        "red/org/acme/project/billing", 0.6, "2025-11-20T16:45:00.000000Z")
    assert "source:wiki:deploys" in legacy.tags and legacy.domain is Domain.CODE_CONTEXT
    notes = {d.where: d.notes for d in drafts}
    assert notes["record 1"] == ("access.read.userIds kept as tags read-user: (no user identities here, not enforced)",)
    assert project.read_agents == () and legacy.read_agents == ()  # no ACL: no read list
    assert notes["record 5"] == ("metadata.owner not mapped",)
    assert notes["record 2"] == ()

    lone = entries["record 12"]  # a session without parents: the agent's own namespace
    assert (lone.scope, lone.namespace, lone.session_id) == (Scope.AGENT, "alice", "s-99")


def test_one_node_a_list_or_json_lines_and_legacy_fields_at_the_top_level() -> None:
    legacy = {"id": "old-1", "content": "Flat legacy record", "scope": {"project": "web"}, "sourceId": "crm",
              "confidenceScore": 0.4, "ttlSec": 60, "createdAt": "2025-01-01T00:00:00Z", "embedding": [0.1]}
    one, bad = read(json.dumps(legacy))
    assert not bad and one[0].where == "record 1"
    entry = place(one[0], TARGET, Limits(), NOW)
    assert (entry.namespace, entry.confidence, entry.expires_at) == ("red/project/web", 0.4,
                                                                     "2025-01-01T00:01:00.000000Z")
    assert "source:crm" in entry.tags
    lines, bad = read(json.dumps(legacy) + "\n\n{not json\n" + json.dumps({**legacy, "id": "old-2"}) + "\n")
    assert [d.where for d in lines] == ["line 1", "line 4"] and list(bad) == ["line 3"]
    wrapped, _ = read(json.dumps({"nodes": [legacy]}))
    assert wrapped[0].key == "id:old-1"
    no_scope, _ = read(json.dumps({"content": "no scope at all"}))
    assert place(no_scope[0], TARGET, Limits(), NOW).namespace == "alice"  # the command's target


@pytest.mark.parametrize(("node", "why"), [
    ({"content": 5}, "content must be a non-empty string"),
    ({"content": "x", "metadata": []}, "metadata must be an object"),
    ({"content": "x", "scope": {"project": ["p"]}}, "scope.project must be a string, got list"),
    ({"content": "x", "scopeLevel": "galaxy", "scope": {"org": "o"}}, "scopeLevel must be one of"),
    ({"content": "x", "retention": {"ttlSec": -5}}, "retention.ttlSec must be more than 0"),
    ({"content": "x", "retention": {"ttlSec": True}}, "retention.ttlSec must be a number"),
    ({"content": "x", "access": {"read": {"agentIds": "a1"}}}, "access.read.agentIds must be a list of strings"),
    ({"content": "x", "provenance": {"timestamp": {"at": 1}}}, "provenance.timestamp must be an ISO-8601"),
    ({"content": "x", "createdAt": 1e300}, "createdAt is not a date"),
])
def test_wrong_types_are_bad_records(node: dict, why: str) -> None:
    drafts, bad = read(json.dumps([node]))
    assert not drafts and bad["record 1"].startswith(why)


def test_read_lists_become_the_entrys_read_agents_and_never_widen() -> None:
    team = Target("memorynode", Scope.TEAM, "red", "red", "lead")
    nodes = [
        {"id": "a", "content": "agents", "scope": {"project": "p"},
         "access": {"read": {"agentIds": ["planner", "bad id", "planner", "coder"]}}},
        {"id": "u", "content": "users only", "scope": {"project": "p"}, "access": {"read": {"userIds": ["u-1"]}}},
        {"id": "n", "content": "no list", "scope": {"project": "p"}, "access": {"read": {"agentIds": []}}},
        {"id": "m", "content": "too many", "access": {"read": {"agentIds": [f"a{n}" for n in range(51)]}}},
    ]
    drafts, bad = read(json.dumps(nodes))
    assert not bad
    agents, users, none = (place(d, team, Limits(), NOW) for d in drafts[:3])
    assert agents.read_agents == ("planner", "coder") and agents.scope is Scope.TEAM
    assert drafts[0].notes == ("access.read.agentIds 'bad id' is not an agent id (left out of the read list)",)
    assert users.read_agents == ("lead",) and "read-user:u-1" in users.tags  # its owner only
    assert none.read_agents == ()
    with pytest.raises(ValueError, match="read_agents may name at most 50 agents"):
        place(drafts[3], team, Limits(), NOW)
