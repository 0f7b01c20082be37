"""The text rule at the MCP tools, identical on both stores: text holding a NUL (which PostgreSQL
text cannot hold) or a lone surrogate is refused as INVALID_PARAMS naming the field, nothing is
written, and the caller's next call works."""

from __future__ import annotations

import pytest

from tests.conftest import Agent

pytestmark = pytest.mark.anyio

NUL_TEXTS = ["a\x00b", "\x00"]


def refused(data: dict, field: str) -> None:
    assert data["items"] == []
    [error] = data["errors"]
    assert error["code"] == "INVALID_PARAMS"
    assert error["details"]["field"] == field
    assert "NUL character (U+0000)" in error["message"]
    assert "\x00" not in error["message"]


@pytest.mark.parametrize("text", NUL_TEXTS)
async def test_a_nul_in_content_or_a_tag_is_refused_naming_the_field_and_nothing_is_written(
        agent: Agent, text: str) -> None:
    failed, data = await agent.crud(action="create", items=[{"content": text}])
    assert failed
    refused(data, "items[0].content")
    failed, data = await agent.crud(action="create", items=[{"content": "fine", "tags": ["ok", text]}])
    assert failed
    refused(data, "items[0].tags[1]")
    failed, data = await agent.crud(action="create", namespace=f"alice/{text}", items=[{"content": "fine"}])
    assert failed
    refused(data, "namespace")
    _, listed = await agent.crud(action="list")
    assert listed["items"] == []
    assert (await agent.create("still works"))["content"] == "still works"


async def test_a_nul_in_an_update_or_a_filter_is_refused_naming_the_field(agent: Agent) -> None:
    entry = await agent.create("the original")
    failed, data = await agent.crud(action="update", items=[{"id": entry["id"], "content": "new\x00"}])
    assert failed and data["errors"][0]["details"]["field"] == "items[0].content"
    failed, data = await agent.crud(action="read", items=[{"id": entry["id"] + "\x00"}])
    assert failed and data["errors"][0]["details"]["field"] == "items[0].id"
    failed, data = await agent.crud(action="list", filters={"tags": ["a\x00"]})
    assert failed
    refused(data, "filters.tags[0]")
    _, read = await agent.crud(action="read", items=[{"id": entry["id"]}])
    assert read["items"][0]["content"] == "the original"


async def test_a_nul_in_a_query_is_refused_naming_the_field(agent: Agent) -> None:
    await agent.create("the deploy key rotates every Monday")
    result = await agent.client.call_tool("memory_retrieve", {"query": "deploy\x00key", "mode": "keyword"})
    assert result.is_error
    refused(result.structured_content, "query")


async def test_a_nul_in_logged_turns_or_reflected_facts_is_refused_and_nothing_is_logged(agent: Agent) -> None:
    failed, data = await agent.reflect(action="log", session_id="s1",
                                       turns=[{"role": "user", "content": "ok"}, {"role": "tool", "content": "\x00"}])
    assert failed
    refused(data, "turns[1].content")
    failed, data = await agent.reflect(action="log", session_id="s\x001", turns=[{"role": "user", "content": "ok"}])
    assert failed
    refused(data, "session_id")
    await agent.log("s1", "we deploy on Mondays")
    failed, data = await agent.reflect(action="reflect", session_id="s1", facts=["deploys\x00 happen on Mondays"])
    assert failed
    refused(data, "facts[0]")
    failed, data = await agent.reflect(action="reflect", session_id="s1", facts=["deploys happen on Mondays"])
    assert not failed, data
    _, listed = await agent.crud(action="list", filters={"session_id": "s1", "layer": "session"})
    assert [e["content"] for e in listed["items"]] == ["we deploy on Mondays"]


async def test_a_trailing_line_break_never_passes_for_an_id_a_namespace_or_a_session(agent: Agent) -> None:
    failed, data = await agent.crud(action="create", namespace="alice\n", items=[{"content": "x"}])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    failed, data = await agent.crud(action="create", scope="team", namespace="red\n", layer="meta",
                                    items=[{"content": "x"}])
    assert failed and data["errors"][0]["code"] in ("INVALID_PARAMS", "FORBIDDEN")
    failed, data = await agent.as_({"agent_id": "alice\n", "system_type": "sys1", "team": "red"}).crud(action="list")
    assert failed and data["errors"][0]["code"] == "FORBIDDEN"
    failed, data = await agent.reflect(action="log", session_id="s1\n", turns=[{"role": "user", "content": "hi"}])
    assert failed and data["errors"][0]["details"]["field"] == "session_id"
    _, listed = await agent.crud(action="list")
    assert listed["items"] == []
