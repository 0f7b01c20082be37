"""MCP resources: memory://metrics, memory://stats and the memory://entries/{id} template."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.conftest import IDENTITY_KEY, Agent, identity

pytestmark = pytest.mark.anyio


async def _read(client: Client, uri: str, ident: dict | None = None) -> dict:
    result = await client.read_resource(uri, meta={IDENTITY_KEY: ident} if ident else None)
    [content] = result.contents
    assert content.mime_type == "application/json"
    return json.loads(content.text)


async def test_resources_and_the_entry_template_are_listed(client: Client) -> None:
    listed = await client.list_resources()
    assert sorted(str(r.uri) for r in listed.resources) == ["memory://metrics", "memory://stats"]
    templates = await client.list_resource_templates()
    assert [t.uri_template for t in templates.resource_templates] == ["memory://entries/{id}"]


async def test_metrics_count_calls_outcomes_latency_and_retrieval(agent: Agent) -> None:
    await agent.create("The backup job runs at 03:00 UTC.")
    await agent.crud(action="read", items=[{"id": "mem_missing"}])
    await agent.client.call_tool("memory_retrieve", {"query": "backup job", "mode": "keyword"})
    await agent.client.call_tool("memory_retrieve", {"query": "zebra", "mode": "keyword"})
    metrics = await _read(agent.client, "memory://metrics")
    crud = metrics["tools"]["memory_crud"]
    assert crud["calls"] == 2 and crud["outcomes"] == {"NOT_FOUND": 1, "ok": 1}
    assert set(crud["latency_ms"]) == {"p50", "p95", "p99", "window"} and crud["latency_ms"]["p50"] > 0
    retrieval = metrics["retrieval"]
    assert retrieval["retrievals"] == 2 and retrieval["hit_rate"] == 0.5 and retrieval["mean_injected_chars"] > 0
    assert metrics["tools"]["memory_retrieve"]["calls"] == 2


async def test_stats_count_only_what_the_caller_may_read(client: Client) -> None:
    alice, bob = Agent(client, identity("alice")), Agent(client, identity("bob"))
    await alice.create("alice's note")
    await Agent(client, identity("lead", "sys3")).create("a red team runbook", scope="team", namespace="red",
                                                          layer="long_term")
    await bob.create("bob's note")
    stats = await _read(client, "memory://stats", identity("alice"))
    assert stats["entries"] == 2 and stats["by_scope"] == {"agent": 1, "team": 1}
    assert {(n["scope"], n["namespace"]) for n in stats["namespaces"]} == {("agent", "alice"), ("team", "red")}
    # The vector backlog too counts only what the caller may read (this server has no vector
    # index, so all three creates stay queued): never bob's note, never the store's total.
    assert stats["vector_outbox_backlog"] == 2
    assert "vectors_in_sqlite" not in stats and "database_bytes" not in stats
    blue = await _read(client, "memory://stats", identity("carol", team="blue"))
    assert blue["entries"] == 0 and blue["namespaces"] == [] and blue["vector_outbox_backlog"] == 0


async def test_an_entry_is_readable_only_by_who_may_read_it(client: Client) -> None:
    alice = Agent(client, identity("alice"))
    mine = await alice.create("alice's private note")
    own = await _read(client, f"memory://entries/{mine['id']}", identity("alice"))
    assert own == mine
    missing_id = "mem_" + "0" * 26
    for who in (identity("bob"), identity("alice", team="blue"), identity("alice", "sys4", "blue")):
        with pytest.raises(MCPError) as denied:
            await _read(client, f"memory://entries/{mine['id']}", who)
        with pytest.raises(MCPError) as absent:
            await _read(client, f"memory://entries/{missing_id}", who)
        assert denied.value.error.code == absent.value.error.code == -32002
        assert denied.value.error.data["code"] == absent.value.error.data["code"] == "NOT_FOUND"
        # Word for word the answer for an id that does not exist (only the id differs).
        assert denied.value.error.message.replace(mine["id"], "ID") == absent.value.error.message.replace(
            missing_id, "ID")
        assert denied.value.error.data["details"] == {"id": mine["id"]}
    for uri in ("memory://entries/mem_nope", "memory://nothing", "memory://entries/../../etc"):
        with pytest.raises(MCPError) as missing:
            await _read(client, uri, identity("alice"))
        assert missing.value.error.code == -32002
    # Without the memory_crud skill: word for word "not found" too (the skill is not named).
    with pytest.raises(MCPError) as no_skill:
        await _read(client, f"memory://entries/{mine['id']}", identity("alice", skills=["memory_retrieve"]))
    with pytest.raises(MCPError) as no_skill_absent:
        await _read(client, f"memory://entries/{missing_id}", identity("alice", skills=["memory_retrieve"]))
    assert no_skill.value.error.code == no_skill_absent.value.error.code == -32002
    assert no_skill.value.error.data["code"] == "NOT_FOUND"
    assert no_skill.value.error.message.replace(mine["id"], "ID") == absent.value.error.message.replace(
        missing_id, "ID")
    assert no_skill.value.error.data == {"code": "NOT_FOUND", "message": no_skill.value.error.message,
                                         "details": {"id": mine["id"]}}
