"""The permission gate through the tool: several agents, two teams, global memory."""

from __future__ import annotations

import json

import pytest

from agent_memory.config import Settings
from tests.conftest import Agent, audit_rows, identity

pytestmark = pytest.mark.anyio


async def test_agent_memory_is_private_to_its_owner(agent: Agent) -> None:
    alice = agent.as_(identity("alice", "sys5", "red"))
    bob = agent.as_(identity("bob", "sys5", "red"))
    entry = await alice.create("alice's private note")
    failed, data = await bob.crud(action="read", namespace="alice", items=[{"id": entry["id"]}])
    assert failed and data["errors"][0]["code"] == "FORBIDDEN"
    failed, data = await bob.crud(action="list", namespace="alice")
    assert failed and data["errors"][0]["code"] == "FORBIDDEN"
    failed, data = await bob.crud(action="read", items=[{"id": entry["id"]}])
    assert failed and data["errors"][0]["code"] == "NOT_FOUND"


async def test_denial_does_not_reveal_whether_the_entry_exists(agent: Agent) -> None:
    alice = agent.as_(identity("alice", "sys1", "red"))
    bob = agent.as_(identity("bob", "sys1", "red"))
    entry = await alice.create("exists")
    _, real = await bob.crud(action="delete", namespace="alice", items=[{"id": entry["id"]}])
    _, fake = await bob.crud(action="delete", namespace="alice", items=[{"id": "mem_01ZZZZZZZZZZZZZZZZZZZZZZZZ"}])
    for data in (real, fake):
        data["errors"][0].pop("details")
    assert real == fake


async def test_same_agent_id_in_another_team_cannot_read_its_old_entries(agent: Agent) -> None:
    red_alice = agent.as_(identity("alice", "sys1", "red"))
    blue_alice = agent.as_(identity("alice", "sys1", "blue"))
    entry = await red_alice.create("written while in team red")
    failed, data = await blue_alice.crud(action="read", items=[{"id": entry["id"]}])
    assert failed and data["errors"][0]["code"] == "NOT_FOUND"
    failed, data = await blue_alice.crud(action="update", items=[{"id": entry["id"], "content": "x"}])
    assert failed and data["errors"][0]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("system_type", ["sys1", "sys2", "sys3", "sys4", "sys5"])
async def test_team_memory_reads_for_the_team_and_writes_for_sys3_and_up(agent: Agent, system_type: str) -> None:
    writer = agent.as_(identity("lead", "sys3", "red"))
    entry = await writer.create("team fact", scope="team", namespace="red", layer="long_term")
    member = agent.as_(identity("member", system_type, "red"))
    failed, data = await member.crud(action="read", scope="team", namespace="red", items=[{"id": entry["id"]}])
    assert not failed and data["items"][0]["content"] == "team fact"
    failed, data = await member.crud(action="update", scope="team", namespace="red",
                                     items=[{"id": entry["id"], "content": "changed"}])
    assert failed is (system_type in ("sys1", "sys2"))
    outsider = agent.as_(identity("outsider", system_type, "blue"))
    for action, items in (("read", [{"id": entry["id"]}]), ("list", None), ("delete", [{"id": entry["id"]}])):
        failed, data = await outsider.crud(action=action, scope="team", namespace="red",
                                           **({"items": items} if items else {}))
        assert failed and data["errors"][0]["code"] == "FORBIDDEN"


@pytest.mark.parametrize("system_type", ["sys1", "sys2", "sys3", "sys4", "sys5"])
async def test_global_memory_is_sys4_only(agent: Agent, system_type: str) -> None:
    caller = agent.as_(identity("someone", system_type, "blue"))
    failed, data = await caller.crud(action="create", scope="global", namespace="global", layer="meta",
                                     items=[{"content": "global rule"}])
    assert failed is (system_type != "sys4")
    failed, data = await caller.crud(action="list", scope="global", namespace="global")
    assert failed is (system_type != "sys4")


async def test_denials_are_audited_without_content(settings: Settings, mode: str) -> None:
    from mcp import Client

    from agent_memory.tools.server import create_server

    async with Client(create_server(settings), mode=mode) as client:
        alice = Agent(client, identity("alice", "sys1", "red"))
        bob = Agent(client, identity("bob", "sys2", "blue"))
        await alice.create("the launch code is 0000")
        await bob.crud(action="create", scope="team", namespace="red", layer="meta",
                       items=[{"content": "smuggled secret text"}])
    rows = audit_rows(settings)
    denials = [r for r in rows if r["outcome"] == "denied"]
    assert len(denials) == 1
    denial = denials[0]
    assert (denial["agent_id"], denial["team"], denial["system_type"]) == ("bob", "blue", "sys2")
    assert (denial["tool"], denial["action"], denial["scope"], denial["namespace"]) == (
        "memory_crud", "create", "team", "red")
    everything = json.dumps([dict(r) for r in rows])
    assert "launch code" not in everything and "smuggled" not in everything
    assert json.loads(denial["details"]) == {"access": "write"}
    assert any(r["action"] == "create" and r["outcome"] == "ok" and r["agent_id"] == "alice" for r in rows)


async def test_reads_lists_and_writes_are_audited_with_who_and_where(settings: Settings, mode: str) -> None:
    from mcp import Client

    from agent_memory.tools.server import create_server

    async with Client(create_server(settings), mode=mode) as client:
        alice = Agent(client, identity("alice", "sys3", "red"))
        entry = await alice.create("audited", scope="team", namespace="red/ops", layer="working")
        await alice.crud(action="read", scope="team", namespace="red/ops", items=[{"id": entry["id"]}])
        await alice.crud(action="list", scope="team", namespace="red/ops")
        await alice.crud(action="update", scope="team", namespace="red/ops",
                         items=[{"id": entry["id"], "content": "changed"}])
        await alice.crud(action="delete", scope="team", namespace="red/ops", items=[{"id": entry["id"]}])
    rows = sorted(audit_rows(settings), key=lambda r: r["at"])  # reads are written in batches, later
    assert [(r["action"], r["outcome"]) for r in rows] == [
        ("create", "ok"), ("read", "ok"), ("list", "ok"), ("update", "ok"), ("delete", "ok")]
    assert all((r["agent_id"], r["scope"], r["namespace"]) == ("alice", "team", "red/ops") for r in rows)
    assert json.loads(rows[2]["details"]) == {"entry_ids": [entry["id"]]}
    assert len({r["request_id"] for r in rows}) == 5
