"""memory_reflect's `namespace`: a project's sessions and what they distil live under the agent's
own namespace (`<agent_id>/<project>`), apart from other projects, through the MCP client."""

from __future__ import annotations

import pytest
from mcp import Client

from agent_memory.bootstrap import open_app
from agent_memory.config import Settings
from agent_memory.core.model.commands import Call
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.sessions.extract import Turn
from agent_memory.tools.server import create_server
from tests.conftest import Agent, identity

pytestmark = pytest.mark.anyio


async def _items(agent: Agent, namespace: str, **filters: object) -> list[dict]:
    failed, data = await agent.crud(action="list", namespace=namespace, filters=filters, limit=100)
    assert not failed, data
    return data["items"]


async def test_a_projects_session_and_facts_stay_in_its_namespace(agent: Agent) -> None:
    for project, hour in (("alpha", "02:00"), ("bravo", "03:00")):
        fact = f"The staging database restarts at {hour} UTC."
        failed, data = await agent.reflect(action="log", session_id="s1", namespace=f"alice/{project}",
                                           turns=[{"role": "user", "content": fact}])
        assert not failed, data
        assert {t["namespace"] for t in data["items"]} == {f"alice/{project}"}
        failed, data = await agent.reflect(action="reflect", session_id="s1", namespace=f"alice/{project}",
                                           facts=[fact])
        assert not failed, data
        # The other project's fact about the same subject is neither reinforced nor superseded.
        assert data["superseded_ids"] == [] and data["updated_ids"] == []
        assert {i["namespace"] for i in data["items"]} == {f"alice/{project}"}
    alpha = await _items(agent, "alice/alpha", layer="long_term")
    bravo = await _items(agent, "alice/bravo", layer="long_term")
    assert [i["content"] for i in alpha] == ["The staging database restarts at 02:00 UTC."]
    assert [i["content"] for i in bravo] == ["The staging database restarts at 03:00 UTC."]
    assert all(i["superseded_by"] is None for i in alpha + bravo)
    # Same session id, three places: each holds only its own turns; the root namespace none.
    assert [i["content"] for i in await _items(agent, "alice/alpha", session_id="s1", layer="session")] == \
        ["The staging database restarts at 02:00 UTC."]
    assert await _items(agent, "alice", session_id="s1") == []


async def test_a_change_within_one_project_still_supersedes(agent: Agent) -> None:
    ns = "alice/alpha"
    facts = ("The staging database restarts at 02:00 UTC.", "The staging database restarts at 03:00 UTC.")
    for n, fact in enumerate(facts):
        failed, data = await agent.reflect(action="log", session_id=f"s{n}", namespace=ns,
                                           turns=[{"role": "user", "content": fact}])
        assert not failed, data
        failed, data = await agent.reflect(action="reflect", session_id=f"s{n}", namespace=ns, facts=[fact])
        assert not failed, data
    assert len(data["superseded_ids"]) == 1


async def test_compact_works_per_project(agent: Agent) -> None:
    ns = "alice/alpha"
    turns = [{"role": "user", "content": f"Step {n} of the migration is done."} for n in range(6)]
    failed, _ = await agent.reflect(action="log", session_id="s1", namespace=ns, turns=turns)
    assert not failed
    failed, data = await agent.reflect(action="compact", session_id="s1", namespace=ns, keep_recent=2)
    assert not failed, data
    assert data["compacted"] == 4 and {i["namespace"] for i in data["items"]} == {ns}
    # The same session id in the root namespace has nothing to compact.
    failed, data = await agent.reflect(action="compact", session_id="s1", keep_recent=0)
    assert not failed and data["compacted"] == 0


@pytest.mark.parametrize("namespace", ["bob", "bob/alpha", "red/alpha", "alicex/alpha"])
async def test_another_agents_namespace_is_refused(agent: Agent, namespace: str) -> None:
    for action, extra in (("log", {"turns": [{"role": "user", "content": "x"}]}), ("reflect", {}),
                          ("compact", {})):
        failed, data = await agent.reflect(action=action, session_id="s1", namespace=namespace, **extra)
        assert failed and data["errors"][0]["code"] == "FORBIDDEN", (action, data)


@pytest.mark.parametrize("namespace", ["", "alice//x", "alice/../bob", "alice/x y", "alice/\u00e9"])
async def test_a_malformed_namespace_is_invalid(agent: Agent, namespace: str) -> None:
    failed, data = await agent.reflect(action="log", session_id="s1", namespace=namespace,
                                       turns=[{"role": "user", "content": "x"}])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS", data
    assert data["errors"][0]["details"].get("field") == "namespace"


async def test_background_reflection_keeps_a_projects_facts_in_its_namespace(settings: Settings) -> None:
    async with open_app(settings) as app:
        caller = app.launch_caller
        call = Call(caller=caller, request_id=new_request_id(), tool="memory_reflect", action="log")
        await app.sessions.log(call, "s9", [Turn(role="user", content="Always run the linter before committing.")],
                               namespace="alice/alpha")
        assert await app.reflection.reflect_pending() == 1
        assert await app.reflection.reflect_pending() == 0
    async with Client(create_server(settings)) as client:
        agent = Agent(client, identity("alice"))
        rules = await _items(agent, "alice/alpha", layer="meta") + await _items(agent, "alice/alpha", layer="long_term")
        assert any("linter" in i["content"] for i in rules), rules
        assert await _items(agent, "alice", layer="meta") == []
