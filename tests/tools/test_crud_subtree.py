"""list with `subtree: true`: a namespace and everything under it, paginated, never beyond what
the caller may read, matched case-exactly."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from agent_memory.config import Settings
from agent_memory.tools.server import create_server
from tests.conftest import Agent, audit_rows, identity

pytestmark = pytest.mark.anyio

LEAD = identity("lead", "sys3", "platform")
READER = identity("reader", "sys1", "platform")


async def _write(agent: Agent, namespace: str, *contents: str) -> list[str]:
    failed, data = await agent.crud(action="create", scope="team", namespace=namespace, layer="long_term",
                                    items=[{"content": c} for c in contents])
    assert not failed, data
    return [e["id"] for e in data["items"]]


async def _list(agent: Agent, **arguments: object) -> list[str]:
    failed, data = await agent.crud(action="list", **arguments)
    assert not failed, data
    return [e["namespace"] for e in data["items"]]


async def test_list_without_subtree_shows_only_the_namespace_itself(agent: Agent) -> None:
    lead = agent.as_(LEAD)
    await _write(lead, "platform", "top")
    await _write(lead, "platform/oncall", "pager rota")
    assert await _list(lead, scope="team", namespace="platform") == ["platform"]


async def test_subtree_lists_the_namespace_and_everything_under_it(agent: Agent) -> None:
    lead = agent.as_(LEAD)
    await _write(lead, "platform", "top")
    await _write(lead, "platform/oncall", "pager rota")
    await _write(lead, "platform/oncall/eu", "eu rota")
    reader = agent.as_(READER)  # sys1 reads its team's memory, subtree included
    listed = await _list(reader, scope="team", namespace="platform", subtree=True)
    assert sorted(listed) == ["platform", "platform/oncall", "platform/oncall/eu"]
    assert sorted(await _list(reader, scope="team", namespace="platform/oncall", subtree=True)) == [
        "platform/oncall", "platform/oncall/eu"]


async def test_subtree_leaves_out_siblings_that_share_a_prefix_and_other_cases(agent: Agent) -> None:
    lead = agent.as_(LEAD)
    await _write(lead, "platform/oncall", "mine")
    await _write(lead, "platform/oncallx", "a sibling, not a child")
    await _write(lead, "platform/OnCall", "another case, another namespace")
    await _write(lead, "platform/oncall_eu", "underscore is no wildcard")
    assert await _list(lead, scope="team", namespace="platform/oncall", subtree=True) == ["platform/oncall"]
    other_team = agent.as_(identity("lead", "sys3", "platformx"))
    await _write(other_team, "platformx", "another team")
    await _write(other_team, "platformx/oncall", "another team's child")
    listed = await _list(lead, scope="team", namespace="platform", subtree=True)
    assert sorted(listed) == ["platform/OnCall", "platform/oncall", "platform/oncall_eu", "platform/oncallx"]
    upper = agent.as_(identity("lead", "sys3", "Platform"))
    assert await _list(upper, scope="team", namespace="Platform", subtree=True) == []


async def test_subtree_pages_through_every_namespace_without_gaps_or_repeats(agent: Agent) -> None:
    lead = agent.as_(LEAD)
    written: list[str] = []
    for namespace in ("platform", "platform/oncall", "platform/db", "platform/oncall/eu"):
        written += await _write(lead, namespace, *(f"{namespace} {i}" for i in range(3)))
    await _write(agent.as_(identity("lead", "sys3", "platformx")), "platformx", "not in the subtree")
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        extra = {"cursor": cursor} if cursor else {}
        failed, data = await lead.crud(action="list", scope="team", namespace="platform", subtree=True, limit=5,
                                       **extra)
        assert not failed, data
        seen += [e["id"] for e in data["items"]]
        pages += 1
        cursor = data["next_cursor"]
        assert data["has_more"] is (cursor is not None)
        if cursor is None:
            break
    assert pages == 3 and seen == list(reversed(written))


async def test_a_subtree_cursor_is_not_valid_without_subtree(agent: Agent) -> None:
    lead = agent.as_(LEAD)
    await _write(lead, "platform", "a", "b")
    await _write(lead, "platform/oncall", "c")
    _, first = await lead.crud(action="list", scope="team", namespace="platform", subtree=True, limit=1)
    failed, data = await lead.crud(action="list", scope="team", namespace="platform", limit=1,
                                   cursor=first["next_cursor"])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert data["errors"][0]["details"]["field"] == "cursor"


async def test_subtree_of_another_teams_namespace_is_forbidden_and_audited(settings: Settings, mode: str) -> None:
    async with Client(create_server(settings), mode=mode) as client:
        agent = Agent(client)
        await _write(agent.as_(identity("lead", "sys3", "payments")), "payments/oncall", "secret rota")
        failed, data = await agent.as_(LEAD).crud(action="list", scope="team", namespace="payments", subtree=True)
        assert failed and data["items"] == [] and data["errors"][0]["code"] == "FORBIDDEN"
    denied = [r for r in audit_rows(settings) if r["outcome"] == "denied"]
    assert [(r["agent_id"], r["action"], r["namespace"]) for r in denied] == [("lead", "list", "payments")]


async def test_agent_scope_subtree_shows_only_the_callers_own_entries(agent: Agent) -> None:
    alice = agent.as_(identity("alice", "sys1", "red"))
    for namespace in ("alice", "alice/notes", "alice/notes/deep"):
        failed, _ = await alice.crud(action="create", namespace=namespace, items=[{"content": namespace}])
        assert not failed
    # the same agent id in another team owns nothing of alice@red
    failed, _ = await agent.as_(identity("alice", "sys1", "blue")).crud(action="create", namespace="alice/notes",
                                                                       items=[{"content": "blue"}])
    assert not failed
    assert sorted(await _list(alice, namespace="alice", subtree=True)) == ["alice", "alice/notes",
                                                                          "alice/notes/deep"]
    failed, data = await agent.as_(identity("bob", "sys5", "red")).crud(action="list", namespace="alice",
                                                                       subtree=True)
    assert failed and data["errors"][0]["code"] == "FORBIDDEN"


@pytest.mark.parametrize("system_type", ["sys1", "sys3", "sys5"])
async def test_global_subtree_is_for_sys4_only(agent: Agent, system_type: str) -> None:
    strategist = agent.as_(identity("s4", "sys4", "hq"))
    for namespace in ("global/policy", "globalx", "globalx/policy", "Global/policy", "global.x", "global-x/y"):
        failed, _ = await strategist.crud(action="create", scope="global", namespace=namespace, layer="meta",
                                          items=[{"content": "policy"}])
        assert not failed
    # global scope has no team check: only the exact, case-sensitive range keeps the siblings out
    assert await _list(strategist, scope="global", namespace="global", subtree=True) == ["global/policy"]
    failed, data = await agent.as_(identity("x", system_type, "hq")).crud(action="list", scope="global",
                                                                         namespace="global", subtree=True)
    assert failed and data["errors"][0]["code"] == "FORBIDDEN"


async def test_subtree_outside_list_is_invalid_params(agent: Agent) -> None:
    failed, data = await agent.crud(action="create", subtree=True, items=[{"content": "x"}])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert data["errors"][0]["details"]["field"] == "subtree" and "only for list" in data["errors"][0]["message"]


async def test_subtree_list_is_audited_as_such(settings: Settings, mode: str) -> None:
    async with Client(create_server(settings), mode=mode) as client:
        lead = Agent(client, LEAD)
        await _write(lead, "platform/oncall", "x")
        await _list(lead, scope="team", namespace="platform", subtree=True)
        await _list(lead, scope="team", namespace="platform")
    rows = [json.loads(r["details"]) for r in audit_rows(settings) if r["action"] == "list"]
    assert [row.get("subtree") for row in rows] == [True, None] and len(rows[0]["entry_ids"]) == 1
