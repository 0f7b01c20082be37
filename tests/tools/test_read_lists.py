"""Read lists (issue 25 item 2): `read_agents` names the agents allowed to read an entry, narrowing
what its scope allows. Set on create, changed on update only by the owner or sys4/sys5 with
if_match (audited); invalid lists are INVALID_PARAMS; a keyed create, a conflict copy and a
promotion never widen one. On SQLite and PostgreSQL."""

from __future__ import annotations

import json

import anyio
import pytest

from agent_memory.config import Settings
from tests.conftest import Agent, audit_rows, identity

pytestmark = pytest.mark.anyio  # on both stores: tests/conftest.py BOTH_STORES

TEAM = {"scope": "team", "namespace": "red", "layer": "long_term"}


def who(agent: Agent, agent_id: str, system_type: str = "sys1") -> Agent:
    return agent.as_(identity(agent_id, system_type, "red"))


async def readable(agent: Agent, entry_id: str) -> bool:
    failed, data = await agent.crud(action="read", scope="team", namespace="red", items=[{"id": entry_id}])
    assert data["items"] or data["errors"][0]["code"] == "NOT_FOUND", data
    return bool(data["items"])


async def test_a_read_list_narrows_a_team_entry_to_its_owner_and_the_agents_it_names(agent: Agent) -> None:
    lead = who(agent, "lead", "sys3")
    entry = await lead.create("the launch date is secret", **TEAM, item={"read_agents": ["alice", "bob", "alice"]})
    assert entry["read_agents"] == ["alice", "bob"]  # duplicates dropped, order kept
    open_entry = await lead.create("the launch date is public", **TEAM)
    assert open_entry["read_agents"] == []
    for reader, sees in (("alice", True), ("bob", True), ("lead", True), ("carol", False), ("ALICE", False)):
        assert await readable(who(agent, reader), entry["id"]) is sees, reader
        assert await readable(who(agent, reader), open_entry["id"]), reader
    # sys4 and sys5 do not bypass a read list (they may change it only on entries they can read).
    assert not await readable(who(agent, "chief", "sys4"), entry["id"])
    failed, data = await who(agent, "carol").crud(action="list", scope="team", namespace="red")
    assert [e["id"] for e in data["items"]] == [open_entry["id"]]


@pytest.mark.parametrize("read_agents", [["bad id"], ["x" * 129], [f"a{n}" for n in range(51)], "alice", [5],
                                         [""]])
async def test_an_invalid_read_list_is_invalid_params_on_create_and_update(agent: Agent, read_agents: object) -> None:
    lead = who(agent, "lead", "sys3")
    failed, data = await lead.crud(action="create", **TEAM, items=[{"content": "x", "read_agents": read_agents}])
    assert data["errors"][0]["code"] == "INVALID_PARAMS", data
    entry = await lead.create("y", **TEAM)
    failed, data = await lead.crud(action="update", scope="team", namespace="red", if_match=entry["etag"],
                                   items=[{"id": entry["id"], "read_agents": read_agents}])
    assert data["errors"][0]["code"] == "INVALID_PARAMS", data


async def test_only_the_owner_or_sys4_sys5_change_a_read_list_with_if_match_and_it_is_audited(
        agent: Agent, settings: Settings) -> None:
    lead = who(agent, "lead", "sys3")
    entry = await lead.create("roadmap", **TEAM, item={"read_agents": ["alice", "deputy", "chief"]})

    async def change(caller: Agent, read_agents: object, etag: str | None) -> dict:
        item = {"id": entry["id"], "read_agents": read_agents, **({"if_match": etag} if etag else {})}
        return (await caller.crud(action="update", scope="team", namespace="red", items=[item]))[1]

    refused = await change(who(agent, "deputy", "sys3"), ["deputy"], entry["etag"])  # a listed sys3 writer
    assert refused["errors"][0]["code"] == "FORBIDDEN", refused
    unguarded = await change(lead, ["alice"], None)
    assert unguarded["errors"][0]["code"] == "INVALID_PARAMS" and "if_match" in unguarded["errors"][0]["message"]
    done = await change(lead, ["alice", "chief"], entry["etag"])
    changed = done["items"][0]
    assert changed["read_agents"] == ["alice", "chief"] and changed["version"] == 2
    assert not await readable(who(agent, "deputy", "sys3"), entry["id"])  # dropped from the list
    by_chief = await change(who(agent, "chief", "sys4"), [], changed["etag"])  # sys4, listed: may clear it
    assert by_chief["items"][0]["read_agents"] == []
    assert await readable(who(agent, "carol"), entry["id"])
    updates = [r for r in audit_rows(settings) if r["action"] == "update" and r["outcome"] == "ok"]
    details = [json.loads(r["details"]) if isinstance(r["details"], str) else r["details"] for r in updates]
    assert [(d.get("read_agents_changed"), d.get("read_agents")) for d in details] == [
        (True, ["alice", "chief"]), (True, [])]
    # An update that leaves the list alone needs no if_match and says nothing about it.
    plain = (await lead.crud(action="update", scope="team", namespace="red",
                             items=[{"id": entry["id"], "content": "roadmap v2"}]))[1]
    assert not plain["errors"] and plain["items"][0]["read_agents"] == []


async def test_keyed_creates_conflict_copies_and_promotions_never_widen_a_read_list(agent: Agent) -> None:
    lead = who(agent, "lead", "sys3")
    held = await lead.create("v1", **TEAM, item={"key": "plan", "read_agents": ["alice"]})
    # An unlisted writer cannot overwrite (or learn) it through its key: for it the key is free.
    failed, data = await who(agent, "other", "sys3").crud(action="create", **TEAM,
                                                          items=[{"content": "v2", "key": "plan"}])
    assert not failed and data["items"][0]["id"] != held["id"] and data["items"][0]["version"] == 1
    assert (await lead.crud(action="read", scope="team", namespace="red", items=[{"id": held["id"]}]))[1][
        "items"][0]["content"] == "v1"
    # A keyed create does not change the held entry's read list.
    failed, data = await lead.crud(action="create", **TEAM, items=[{"content": "v2", "key": "plan",
                                                                     "read_agents": ["bob"]}])
    assert data["errors"][0]["code"] == "INVALID_PARAMS"
    again = await lead.create("v2", **TEAM, item={"key": "plan"})
    assert (again["id"], again["version"], again["read_agents"]) == (held["id"], 2, ["alice"])
    # A stale update's conflict copy keeps the list (its writer owns the copy).
    failed, data = await who(agent, "alice", "sys3").crud(action="update", scope="team", namespace="red",
                                                          items=[{"id": held["id"], "if_match": held["etag"],
                                                                  "content": "mine"}])
    conflict_id = data["errors"][0]["details"]["conflict_id"]
    assert not await readable(who(agent, "carol"), conflict_id)
    failed, data = await who(agent, "alice", "sys3").crud(action="read", scope="team", namespace="red",
                                                          items=[{"id": conflict_id}])
    assert data["items"][0]["read_agents"] == ["alice"]
    # A promotion carries the list along.
    failed, data = await lead.crud(action="promote", scope="team", namespace="red",
                                   items=[{"id": held["id"], "target_scope": "team", "target_namespace": "red/ops"}])
    copy = data["items"][0]
    assert copy["read_agents"] == ["alice"]
    failed, data = await who(agent, "carol").crud(action="read", scope="team", namespace="red/ops",
                                                  items=[{"id": copy["id"]}])
    assert data["errors"][0]["code"] == "NOT_FOUND"


async def keyed_create(caller: Agent, content: str, **item: object) -> tuple[bool, dict]:
    return await caller.crud(action="create", **TEAM, items=[{"content": content, "key": "plan", **item}])


async def test_a_key_held_by_an_entry_the_writer_may_not_read_is_free_for_it(
        agent: Agent, settings: Settings) -> None:
    """Issue 34.4: a keyed create must not tell a writer the list leaves out that the key is held.
    It is answered exactly as a create of a key nobody holds: a new entry of its own, version 1;
    the hidden entry is untouched and the writer still cannot see it."""
    lead, other = who(agent, "lead", "sys3"), who(agent, "other", "sys3")
    held = await lead.create("the launch plan", **TEAM, item={"key": "plan", "read_agents": ["alice"]})
    failed, hidden = await keyed_create(other, "my plan")
    failed_free, free = await other.crud(action="create", **TEAM, items=[{"content": "my plan", "key": "free"}])
    assert not failed and not failed_free
    mine, fresh = hidden["items"][0], free["items"][0]
    assert (mine["version"], mine["read_agents"], mine["owner_agent_id"]) == (1, [], "other")
    assert (fresh["version"], fresh["read_agents"], fresh["owner_agent_id"]) == (1, [], "other")
    assert hidden["errors"] == free["errors"] == [] and hidden.keys() == free.keys()
    creates = {r["entry_id"]: r for r in audit_rows(settings) if r["action"] == "create"}
    assert "key_updated" not in json.dumps(creates[mine["id"]]["details"] or {})  # audited as a new entry
    # Its own entry: a second create updates it, never the hidden one.
    failed, again = await keyed_create(other, "my plan, v2")
    assert again["items"][0]["id"] == mine["id"] and again["items"][0]["version"] == 2
    failed, data = await other.crud(action="read", scope="team", namespace="red", filters={"key": "plan"})
    assert [e["id"] for e in data["items"]] == [mine["id"]]
    failed, data = await other.crud(action="list", scope="team", namespace="red", filters={"key": "plan"})
    assert [e["id"] for e in data["items"]] == [mine["id"]]
    # The hidden entry is as it was, and its owner still reaches it by its key.
    failed, data = await lead.crud(action="read", scope="team", namespace="red", filters={"key": "plan"})
    assert (data["items"][0]["id"], data["items"][0]["content"], data["items"][0]["version"]) == (
        held["id"], "the launch plan", 1)


async def test_a_listed_writer_updates_the_read_listed_entry_its_key_names(agent: Agent) -> None:
    lead, alice, other = who(agent, "lead", "sys3"), who(agent, "alice", "sys3"), who(agent, "other", "sys3")
    held = await lead.create("v1", **TEAM, item={"key": "plan", "read_agents": ["alice"]})
    shared = (await keyed_create(other, "the shared plan"))[1]["items"][0]
    # alice may read both: her create updates the read-listed one (never widening what she wrote).
    failed, data = await keyed_create(alice, "v2 by alice")
    assert not failed and data["items"][0]["id"] == held["id"] and data["items"][0]["version"] == 2
    assert data["items"][0]["read_agents"] == ["alice"]
    failed, data = await alice.crud(action="read", scope="team", namespace="red", filters={"key": "plan"})
    assert [e["id"] for e in data["items"]] == [held["id"]]
    failed, data = await alice.crud(action="list", scope="team", namespace="red", filters={"key": "plan"})
    assert {e["id"] for e in data["items"]} == {held["id"], shared["id"]}
    # With a list of its own, a create is about the writer's own read-listed entry: a new one here.
    failed, data = await keyed_create(alice, "alice's own", read_agents=["lead"])
    assert not failed and data["items"][0]["id"] not in (held["id"], shared["id"])
    failed, data = await alice.crud(action="read", scope="team", namespace="red", filters={"key": "plan"})
    assert data["items"][0]["content"] == "alice's own"  # her own comes first
    failed, data = await keyed_create(lead, "v3")  # the owner's create without a list: its own entry
    assert data["items"][0]["id"] == held["id"] and data["items"][0]["version"] == 3


async def test_adding_or_removing_a_keyed_entrys_read_list_is_the_owners_and_needs_a_free_slot(
        agent: Agent) -> None:
    lead, chief = who(agent, "lead", "sys3"), who(agent, "chief", "sys4")
    shared = await lead.create("the shared plan", **TEAM, item={"key": "plan"})
    held = await lead.create("the secret plan", **TEAM, item={"key": "plan", "read_agents": ["chief"]})
    assert held["id"] != shared["id"]  # one key, one entry per slot

    async def set_list(caller: Agent, entry: dict, read_agents: list[str]) -> tuple[bool, dict]:
        return await caller.crud(action="update", scope="team", namespace="red",
                                 items=[{"id": entry["id"], "if_match": entry["etag"], "read_agents": read_agents}])

    # A sys4 agent may change a list it can read, but not add or remove one on a keyed entry.
    failed, data = await set_list(chief, held, [])
    assert failed and data["errors"][0]["code"] == "FORBIDDEN"
    assert data["errors"][0]["details"]["field"] == "read_agents"
    failed, data = await set_list(chief, held, ["chief", "alice"])
    assert not failed, data  # a list for a list: the entry stays in its owner's slot
    held = data["items"][0]
    # The owner may, into a free slot only: the shared one is held by `shared`.
    failed, data = await set_list(lead, held, [])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert data["errors"][0]["details"] == {"field": "read_agents", "held_by": shared["id"], "index": 0}
    failed, data = await set_list(lead, shared, ["alice"])
    assert failed and data["errors"][0]["details"]["held_by"] == held["id"]
    failed, _ = await lead.crud(action="delete", scope="team", namespace="red", items=[{"id": shared["id"]}])
    assert not failed
    failed, data = await set_list(lead, held, [])
    assert not failed and data["items"][0]["read_agents"] == []
    failed, data = await keyed_create(who(agent, "other", "sys3"), "now shared")
    assert data["items"][0]["id"] == held["id"] and data["items"][0]["version"] == 4  # create, two lists, this


async def test_racing_keyed_creates_beside_a_hidden_holder_leave_one_shared_entry(agent: Agent) -> None:
    lead = who(agent, "lead", "sys3")
    held = await lead.create("hidden", **TEAM, item={"key": "plan", "read_agents": ["alice"]})
    writers = [who(agent, f"w{n}", "sys3") for n in range(6)]
    written: list[dict] = []

    async def write(writer: Agent, n: int) -> None:
        failed, data = await keyed_create(writer, f"writer {n}")
        assert not failed, data
        written.append(data["items"][0])

    async with anyio.create_task_group() as tg:
        for n, writer in enumerate(writers):
            tg.start_soon(write, writer, n)
    assert len({e["id"] for e in written}) == 1 and held["id"] not in {e["id"] for e in written}
    assert sorted(e["version"] for e in written) == [1, 2, 3, 4, 5, 6]
    failed, data = await lead.crud(action="list", scope="team", namespace="red", filters={"key": "plan"})
    assert {e["id"] for e in data["items"]} == {held["id"], written[0]["id"]}
    assert {e["content"] for e in data["items"] if e["id"] == held["id"]} == {"hidden"}
