"""One canonical log line per tool call, never with memory content."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from tests.conftest import Agent, identity

pytestmark = pytest.mark.anyio


async def test_each_call_logs_one_canonical_line_without_content(agent: Agent) -> None:
    with capture_logs() as logs:
        entry = await agent.create("TOP-SECRET-CONTENT")
        await agent.crud(action="read", items=[{"id": entry["id"]}])
        await agent.as_(identity("bob", "sys1", "blue")).crud(action="list", namespace="alice")
    lines = [e for e in logs if e["event"] == "tool_invocation" and e["tool"] == "memory_crud"]
    assert [(e["action"], e["outcome"]) for e in lines] == [("create", "ok"), ("read", "ok"), ("list", "FORBIDDEN")]
    for line in lines:
        assert {"agent_id", "team", "system_type", "tool", "action", "scope", "outcome", "duration_ms",
                "request_id"} <= set(line)
    assert lines[2]["agent_id"] == "bob" and lines[2]["scope"] == "agent"
    assert "TOP-SECRET-CONTENT" not in repr(logs)
