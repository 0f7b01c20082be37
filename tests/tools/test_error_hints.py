"""Error messages say how to fix the request: who may, which namespace, which values, which
bounds; the same facts are in `details` for programs. Codes stay the SPEC's."""

from __future__ import annotations

import pytest

from agent_memory.core.access.permissions import allowed_system_types
from agent_memory.core.model.models import Access, Layer, Scope
from tests.conftest import Agent, identity

pytestmark = pytest.mark.anyio

LAYERS = [layer.value for layer in Layer]


def _names(access: Access, scope: Scope) -> list[str]:
    return [st.value for st in allowed_system_types(access, scope)]


async def _error(agent: Agent, **arguments: object) -> dict:
    failed, data = await agent.crud(**arguments)
    assert failed and len(data["errors"]) == 1, data
    return data["errors"][0]


@pytest.mark.parametrize("system_type", ["sys1", "sys2"])
async def test_team_write_denial_names_the_system_types_that_may(agent: Agent, system_type: str) -> None:
    error = await _error(agent.as_(identity("w", system_type, "red")), action="create", scope="team",
                         namespace="red", layer="long_term", items=[{"content": "x"}])
    writers = _names(Access.WRITE, Scope.TEAM)
    assert error["code"] == "FORBIDDEN" and error["details"]["allowed_system_types"] == writers
    assert f"only {', '.join(writers)} of that team may write team memory" in error["message"]
    readers_only = [s for s in _names(Access.READ, Scope.TEAM) if s not in writers]
    assert system_type in readers_only and f"({', '.join(readers_only)} may only read it)" in error["message"]
    assert "write to your agent scope instead" in error["message"]


async def test_another_teams_namespace_suggests_the_callers_team(agent: Agent) -> None:
    error = await _error(agent.as_(identity("w", "sys3", "red")), action="list", scope="team", namespace="blue/ops")
    assert error["code"] == "FORBIDDEN" and error["details"]["suggested_namespace"] == "red"
    assert "your team is red: use namespace red or red/..." in error["message"]


async def test_another_agents_namespace_suggests_the_callers_own(agent: Agent) -> None:
    error = await _error(agent.as_(identity("alice", "sys5", "red")), action="list", namespace="bob")
    assert error["code"] == "FORBIDDEN" and error["details"]["suggested_namespace"] == "alice"
    assert "use namespace alice" in error["message"]


@pytest.mark.parametrize("access", [Access.READ, Access.WRITE])
async def test_global_denial_names_who_may(agent: Agent, access: Access) -> None:
    arguments: dict = {"action": "list"} if access is Access.READ else {
        "action": "create", "layer": "meta", "items": [{"content": "x"}]}
    error = await _error(agent.as_(identity("w", "sys3", "red")), scope="global", namespace="global", **arguments)
    assert error["details"]["allowed_system_types"] == _names(access, Scope.GLOBAL) == ["sys4"]
    assert f"only sys4 of any team may {access.value} global memory" in error["message"]
    assert "use scope team (namespace red)" in error["message"]


async def test_missing_team_namespace_suggests_the_callers_team(agent: Agent) -> None:
    error = await _error(agent.as_(identity("w", "sys3", "payments")), action="list", scope="team")
    assert error["code"] == "INVALID_PARAMS" and error["details"] == {"field": "namespace",
                                                                        "suggested_namespace": "payments"}
    assert "use your team's namespace payments" in error["message"]


async def test_missing_layer_lists_the_layers(agent: Agent) -> None:
    error = await _error(agent.as_(identity("w", "sys3", "red")), action="create", scope="team", namespace="red",
                         items=[{"content": "x"}])
    assert error["code"] == "INVALID_PARAMS" and error["details"]["allowed"] == LAYERS
    assert f"layer is required for team scope: one of {', '.join(LAYERS)}" in error["message"]


@pytest.mark.parametrize(("arguments", "field", "expected", "details"), [
    ({"action": "explode"}, "action", "action must be one of create, read, update, delete, list, promote",
     {"allowed": ["create", "read", "update", "delete", "list", "promote", "unsupersede"]}),
    ({"action": "list", "scope": "teams"}, "scope", "one of agent, team, global",
     {"allowed": ["agent", "team", "global"]}),
    ({"action": "list", "limit": 500}, "limit", "limit must be between 1 and 100", {"minimum": 1, "maximum": 100}),
    ({"action": "list", "limit": "5"}, "limit", "limit must be an integer, not a string", {}),
    ({"action": "list", "filters": {"layer": "long"}}, "filters.layer", "one of working, session, long_term, meta",
     {"allowed": LAYERS}),
    ({"action": "list", "filter": {}}, "filter", "unknown field filter; the fields here are action, scope", {}),
    ({"action": "create", "items": [{"content": "x", "confidence": 2}]}, "items[0].confidence",
     "between 0.0 and 1.0", {"minimum": 0.0, "maximum": 1.0, "index": 0}),
    ({"action": "create", "items": [{"content": "x", "priority": "urgent"}]}, "items[0].priority",
     "one of low, medium, high", {"allowed": ["low", "medium", "high"], "index": 0}),
    ({"action": "create", "items": [{"content": "x", "text": "y"}]}, "items[0].text",
     "the fields here are content, tags", {}),
    ({"action": "create", "items": []}, "items", "items: [{content, tags?", {"limit": 10}),
])
async def test_validation_errors_state_the_allowed_values_or_bounds(
        agent: Agent, arguments: dict, field: str, expected: str, details: dict) -> None:
    error = await _error(agent, **arguments)
    assert error["code"] == "INVALID_PARAMS" and error["details"]["field"] == field
    assert expected in error["message"], error["message"]
    assert {k: error["details"][k] for k in details} == details


async def test_update_without_changes_lists_the_updatable_fields(agent: Agent) -> None:
    entry = await agent.create("x")
    error = await _error(agent, action="update", items=[{"id": entry["id"]}])
    allowed = ["content", "tags", "priority", "confidence", "layer", "expires_at", "domain", "read_agents"]
    assert error["details"]["allowed"] == allowed
    assert f"one of {', '.join(allowed)}" in error["message"]


async def test_not_found_says_ids_are_looked_up_in_the_requests_scope_and_namespace(agent: Agent) -> None:
    entry = await agent.create("x", namespace="alice/notes")
    error = await _error(agent, action="read", items=[{"id": entry["id"]}])
    assert error["code"] == "NOT_FOUND"
    assert "send the ones the entry lives in" in error["message"] and "agent namespace alice" in error["message"]


async def test_content_over_the_limit_says_to_split_it(agent: Agent) -> None:
    error = await _error(agent, action="create", items=[{"content": "x" * 40_000}])
    assert error["details"]["limit"] == 32_000 and "split it into several entries" in error["message"]
