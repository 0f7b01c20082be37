"""memory_retrieve and time: since/until filters on a memory's own date, dates in context lines,
superseded facts on request."""

from __future__ import annotations

import pytest

from tests.conftest import Agent

pytestmark = pytest.mark.anyio


async def _retrieve(agent: Agent, query: str, **arguments: object) -> tuple[bool, dict]:
    result = await agent.client.call_tool("memory_retrieve", {"query": query, "mode": "keyword", **arguments})
    return bool(result.is_error), result.structured_content


async def _decisions(agent: Agent) -> dict[str, str]:
    data = await agent.log("planning", *[
        {"role": "user", "content": text, "at": at} for text, at in (
            ("We decided the billing service stays on PostgreSQL.", "2026-05-04T10:00:00Z"),
            ("We decided to move the nightly build to 02:00.", "2026-05-11T09:30:00+02:00"),
            ("We decided the release train leaves every second Tuesday.", "2026-05-12T16:00:00Z"),
            ("We decided the design review happens on Thursdays.", "2026-05-20T08:00:00Z"))])
    return {item["created_at"][:10]: item["id"] for item in data["items"]}


async def test_since_and_until_keep_a_window_of_dated_memories(agent: Agent) -> None:
    ids = await _decisions(agent)
    failed, data = await _retrieve(agent, "what did we decide", min_score=0)
    assert not failed and {i["id"] for i in data["items"]} == set(ids.values())
    failed, week = await _retrieve(agent, "what did we decide", since="2026-05-11", until="2026-05-17", min_score=0)
    assert not failed, week
    assert {i["id"] for i in week["items"]} == {ids["2026-05-11"], ids["2026-05-12"]}
    # each context line carries the memory's own date, so "last week" can be answered from it
    assert "2026-05-11 by " in week["context"] and "2026-05-12 by " in week["context"]
    failed, day = await _retrieve(agent, "what did we decide", until="2026-05-11", min_score=0)
    assert {i["id"] for i in day["items"]} == {ids["2026-05-04"], ids["2026-05-11"]}  # a bare date: that whole day
    failed, precise = await _retrieve(agent, "what did we decide", since="2026-05-11T07:30:00Z",
                                      until="2026-05-12T16:00:00Z", min_score=0)
    assert {i["id"] for i in precise["items"]} == {ids["2026-05-11"]}  # since inclusive, until exclusive
    failed, later = await _retrieve(agent, "what did we decide", since="2026-06-01", min_score=0)
    assert not failed and later["items"] == [] and later["context"] == ""


async def test_hybrid_and_semantic_modes_honour_the_window(agent: Agent) -> None:
    ids = await _decisions(agent)
    for mode in ("hybrid", "semantic"):
        result = await agent.client.call_tool("memory_retrieve", {
            "query": "when is the design review", "mode": mode, "since": "2026-05-15", "min_score": 0})
        data = result.structured_content
        if mode == "semantic" and result.is_error:  # this fixture has no vector index
            assert data["errors"][0]["details"]["reason"] == "semantic_unavailable"
            continue
        assert {i["id"] for i in data["items"]} <= {ids["2026-05-20"]}


async def test_bad_windows_are_refused(agent: Agent) -> None:
    for arguments, field in (({"since": "last week"}, "since"), ({"until": "2026-13-01"}, "until"),
                             ({"since": "2026-05-12", "until": "2026-05-11"}, "since"),
                             ({"since": "2026-05-11T00:00:00Z", "until": "2026-05-11T00:00:00Z"}, "since"),
                             ({"since": "0000-01-01"}, "since")):
        failed, data = await _retrieve(agent, "anything", **arguments)
        assert failed and data["errors"][0]["code"] == "INVALID_PARAMS", (arguments, data)
        assert data["errors"][0]["details"]["field"] == field
    result = await agent.client.call_tool("memory_retrieve", {"query": "x", "since": 20260511})
    assert result.is_error and result.structured_content["errors"][0]["code"] == "INVALID_PARAMS"


async def test_superseded_facts_are_left_out_unless_asked_for(agent: Agent) -> None:
    old = await agent.reflect(action="reflect", session_id="a", facts=["The API server listens on port 8080."])
    new = await agent.reflect(action="reflect", session_id="b", facts=["The API server listens on port 8081."])
    old_id, new_id = old[1]["items"][0]["id"], new[1]["items"][0]["id"]
    assert new[1]["superseded_ids"] == [old_id]
    failed, data = await _retrieve(agent, "API server port", min_score=0)
    assert [i["id"] for i in data["items"]] == [new_id]
    failed, data = await _retrieve(agent, "API server port", min_score=0, include_superseded=True)
    assert {i["id"] for i in data["items"]} == {old_id, new_id}
