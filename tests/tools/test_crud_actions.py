"""memory_crud end to end through the SDK's in-memory client, on both protocol generations."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from agent_memory.application import jobs
from tests.conftest import Agent, identity

pytestmark = pytest.mark.anyio


async def test_create_returns_the_stored_entry_with_version_one(agent: Agent) -> None:
    entry = await agent.create("The deploy key lives in the vault", item={"tags": ["ops", "keys"], "priority": "high"})
    assert entry["id"].startswith("mem_")
    assert entry["scope"] == "agent" and entry["namespace"] == "alice" and entry["team"] == "red"
    assert entry["owner_agent_id"] == "alice" and entry["layer"] == "long_term"
    assert entry["version"] == 1 and entry["etag"]
    assert entry["tags"] == ["ops", "keys"] and entry["priority"] == "high"
    assert entry["source"] == "manual" and entry["confidence"] == 1.0
    assert entry["created_at"].endswith("Z") and entry["conflict"] is False


async def test_read_returns_what_create_stored(agent: Agent) -> None:
    entry = await agent.create("remember the milk")
    failed, data = await agent.crud(action="read", items=[{"id": entry["id"]}])
    assert not failed and data["items"] == [entry]
    failed, data = await agent.crud(action="read", filters={"ids": [entry["id"]]})
    assert not failed and data["items"] == [entry]


async def test_read_of_missing_id_is_not_found_with_index(agent: Agent) -> None:
    entry = await agent.create("exists")
    failed, data = await agent.crud(action="read", items=[{"id": entry["id"]}, {"id": "mem_nope"}])
    assert not failed
    assert [e["id"] for e in data["items"]] == [entry["id"]]
    assert data["errors"][0]["code"] == "NOT_FOUND" and data["errors"][0]["details"]["index"] == 1


async def test_update_changes_only_sent_fields_and_bumps_version_and_etag(agent: Agent) -> None:
    entry = await agent.create("v1", item={"tags": ["x"], "priority": "low"})
    failed, data = await agent.crud(action="update", items=[{"id": entry["id"], "content": "v2"}],
                                    if_match=entry["etag"])
    assert not failed, data
    updated = data["items"][0]
    assert updated["content"] == "v2" and updated["tags"] == ["x"] and updated["priority"] == "low"
    assert updated["version"] == 2 and updated["etag"] != entry["etag"]
    assert updated["created_at"] == entry["created_at"] and updated["updated_at"] >= entry["updated_at"]


async def test_update_with_stale_etag_stores_conflict_entry(agent: Agent) -> None:
    entry = await agent.create("original")
    _, data = await agent.crud(action="update", items=[{"id": entry["id"], "content": "first edit"}])
    failed, data = await agent.crud(action="update", items=[{"id": entry["id"], "content": "stale edit"}],
                                    if_match=entry["etag"])
    assert failed and data["items"] == []
    error = data["errors"][0]
    assert error["code"] == "CONFLICT"
    assert error["details"]["current_version"] == 2
    assert error["details"]["current_etag"] != entry["etag"]
    conflict_id = error["details"]["conflict_id"]
    _, read = await agent.crud(action="read", items=[{"id": conflict_id}, {"id": entry["id"]}])
    conflict, original = read["items"]
    assert conflict["conflict"] is True and conflict["conflict_of"] == entry["id"]
    assert conflict["content"] == "stale edit" and conflict["namespace"] == "alice"
    assert original["content"] == "first edit" and original["version"] == 2


async def test_conflict_entry_cannot_be_updated_and_is_reconciled_by_delete(agent: Agent) -> None:
    entry = await agent.create("original")
    await agent.crud(action="update", items=[{"id": entry["id"], "content": "theirs"}])
    _, data = await agent.crud(action="update", items=[{"id": entry["id"], "content": "mine"}],
                               if_match=entry["etag"])
    conflict_id = data["errors"][0]["details"]["conflict_id"]
    failed, data = await agent.crud(action="update", items=[{"id": conflict_id, "content": "edit conflict"}])
    assert failed and data["errors"][0]["code"] == "CONFLICT"
    _, listed = await agent.crud(action="list", filters={"conflict": True})
    assert [e["id"] for e in listed["items"]] == [conflict_id]
    _, current = await agent.crud(action="read", items=[{"id": entry["id"]}])
    failed, _ = await agent.crud(action="update", items=[{"id": entry["id"], "content": "merged"}],
                                 if_match=current["items"][0]["etag"])
    assert not failed
    failed, _ = await agent.crud(action="delete", items=[{"id": conflict_id}])
    assert not failed
    _, listed = await agent.crud(action="list", filters={"conflict": True})
    assert listed["items"] == []


async def test_delete_with_stale_etag_is_conflict_and_deletes_nothing(agent: Agent) -> None:
    entry = await agent.create("keep me")
    failed, data = await agent.crud(action="delete", items=[{"id": entry["id"], "if_match": "stale"}])
    assert failed and data["errors"][0]["code"] == "CONFLICT"
    assert data["errors"][0]["details"]["current_etag"] == entry["etag"]
    assert data["errors"][0]["details"]["current_version"] == 1
    _, read = await agent.crud(action="read", items=[{"id": entry["id"]}])
    assert read["items"][0]["id"] == entry["id"]


async def test_delete_removes_entry_and_returns_it(agent: Agent) -> None:
    entry = await agent.create("forget me")
    failed, data = await agent.crud(action="delete", items=[{"id": entry["id"]}], if_match=entry["etag"])
    assert not failed and data["items"][0]["id"] == entry["id"]
    failed, data = await agent.crud(action="read", items=[{"id": entry["id"]}])
    assert failed and data["errors"][0]["code"] == "NOT_FOUND"


async def test_bulk_items_succeed_or_fail_on_their_own(agent: Agent) -> None:
    failed, data = await agent.crud(
        action="create",
        items=[{"content": "one"}, {"content": ""}, {"content": "three", "bogus": 1}, {"content": "four"}],
    )
    assert not failed
    assert [e["content"] for e in data["items"]] == ["one", "four"]
    assert [(e["code"], e["details"]["index"]) for e in data["errors"]] == [
        ("INVALID_PARAMS", 1), ("INVALID_PARAMS", 2)]
    assert data["errors"][1]["details"]["field"] == "items[2].bogus"


async def test_expired_entries_are_hidden_unless_asked_for(agent: Agent, monkeypatch: pytest.MonkeyPatch) -> None:
    # The pass that prunes expired entries a second after writes would delete the one-second entry
    # this test lists with include_expired whenever the creates below take a second (a loaded
    # machine): it waits past the test instead.
    monkeypatch.setattr(jobs, "AFTER_WRITE_DELAY_SECONDS", 3600.0)
    fresh = await agent.create("fresh", item={"ttl_seconds": 3600})
    stale = await agent.create("about to expire", item={"expires_at": "2999-01-01T00:00:00Z"})
    # Expire it through an update: expiry in the past is refused, so set it a moment ahead and wait
    # on the store's own clock instead of sleeping: use a one-second ttl created entry.
    short = await agent.create("short lived", item={"ttl_seconds": 1})
    assert fresh["expires_at"] and stale["expires_at"] == "2999-01-01T00:00:00.000000Z"
    with anyio.fail_after(5):
        while True:
            failed, data = await agent.crud(action="read", items=[{"id": short["id"]}])
            if failed:
                break
            await anyio.sleep(0.1)
    assert data["errors"][0]["code"] == "NOT_FOUND"
    _, listed = await agent.crud(action="list")
    assert short["id"] not in [e["id"] for e in listed["items"]]
    _, listed = await agent.crud(action="list", filters={"include_expired": True})
    assert short["id"] in [e["id"] for e in listed["items"]]
    failed, data = await agent.crud(action="update", items=[{"id": short["id"], "content": "revive"}])
    assert failed and data["errors"][0]["code"] == "NOT_FOUND"


async def test_expires_at_in_the_past_is_invalid(agent: Agent) -> None:
    failed, data = await agent.crud(action="create", items=[{"content": "x", "expires_at": "2001-01-01T00:00:00Z"}])
    assert failed and data["errors"][0]["details"]["field"] == "expires_at"


async def test_promote_copies_into_team_scope_with_promoted_from(agent: Agent) -> None:
    lead = agent.as_(identity("alice", "sys3", "red"))
    source = await lead.create("Runbook: restart the queue with care", item={"tags": ["ops"], "source": "tool"})
    failed, data = await lead.crud(
        action="promote", items=[{"id": source["id"], "target_scope": "team", "target_namespace": "red/ops"}]
    )
    assert not failed, data
    copy = data["items"][0]
    assert copy["id"] != source["id"] and copy["promoted_from"] == source["id"]
    assert copy["scope"] == "team" and copy["namespace"] == "red/ops" and copy["team"] == "red"
    assert copy["source"] == "tool" and copy["content"] == source["content"] and copy["version"] == 1
    _, original = await lead.crud(action="read", items=[{"id": source["id"]}])
    assert original["items"][0]["version"] == 1


async def test_promote_needs_write_on_the_target(agent: Agent) -> None:
    source = await agent.create("sys1 cannot write team memory")
    failed, data = await agent.crud(
        action="promote", items=[{"id": source["id"], "target_scope": "team", "target_namespace": "red"}]
    )
    assert failed and data["errors"][0]["code"] == "FORBIDDEN" and data["errors"][0]["details"]["index"] == 0


async def test_team_and_global_need_namespace_and_layer(agent: Agent) -> None:
    lead = agent.as_(identity("alice", "sys4", "red"))
    failed, data = await lead.crud(action="create", scope="team", items=[{"content": "x", "layer": "meta"}])
    assert failed and data["errors"][0]["details"]["field"] == "namespace"
    failed, data = await lead.crud(action="create", scope="global", namespace="global", items=[{"content": "x"}])
    assert failed and data["errors"][0]["details"]["field"] == "layer"
    failed, data = await lead.crud(action="create", scope="global", namespace="global", layer="meta",
                                   items=[{"content": "Policy: never store secrets"}])
    assert not failed and data["items"][0]["team"] is None and data["items"][0]["layer"] == "meta"


async def test_agent_namespace_defaults_to_caller_id_and_accepts_sub_namespaces(agent: Agent) -> None:
    entry = await agent.create("sub", namespace="alice/project-x")
    assert entry["namespace"] == "alice/project-x"
    _, listed = await agent.crud(action="list")
    assert entry["id"] not in [e["id"] for e in listed["items"]]
    _, listed = await agent.crud(action="list", namespace="alice/project-x")
    assert [e["id"] for e in listed["items"]] == [entry["id"]]
    failed, data = await agent.crud(action="read", items=[{"id": entry["id"]}])
    assert failed and data["errors"][0]["code"] == "NOT_FOUND"


async def test_list_in_agent_scope_shows_only_the_callers_team(client: Client) -> None:
    red, blue = Agent(client, identity("alice", team="red")), Agent(client, identity("alice", team="blue"))
    mine = await red.create("red alice's note")
    await blue.create("blue alice's note")
    failed, data = await red.crud(action="list")
    assert not failed and [e["id"] for e in data["items"]] == [mine["id"]]
