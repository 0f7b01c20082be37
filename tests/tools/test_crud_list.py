"""list: filters, newest-first keyset pagination and signed cursors."""

from __future__ import annotations

import base64
import json

import pytest

from tests.conftest import Agent

pytestmark = pytest.mark.anyio


async def _page_through(agent: Agent, limit: int, **arguments: object) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor = None
    while True:
        extra = {"cursor": cursor} if cursor else {}
        failed, data = await agent.crud(action="list", limit=limit, **arguments, **extra)
        assert not failed, data
        pages.append([e["id"] for e in data["items"]])
        assert data["has_more"] is (data["next_cursor"] is not None)
        cursor = data["next_cursor"]
        if cursor is None:
            return pages


async def test_list_pages_newest_first_without_gaps_or_repeats(agent: Agent) -> None:
    failed, data = await agent.crud(action="create", items=[{"content": f"note {i}"} for i in range(10)])
    assert not failed
    _, more = await agent.crud(action="create", items=[{"content": f"note {i}"} for i in range(10, 13)])
    created = [e["id"] for e in data["items"] + more["items"]]
    pages = await _page_through(agent, limit=5)
    assert [len(p) for p in pages] == [5, 5, 3]
    flat = [i for page in pages for i in page]
    assert flat == list(reversed(created))


async def test_has_more_is_false_when_the_last_page_is_exactly_full(agent: Agent) -> None:
    await agent.crud(action="create", items=[{"content": f"n{i}"} for i in range(4)])
    pages = await _page_through(agent, limit=2)
    assert [len(p) for p in pages] == [2, 2]


async def test_list_filters_narrow_the_result(agent: Agent) -> None:
    await agent.crud(action="create", items=[
        {"content": "a", "tags": ["ops", "db"], "priority": "high", "layer": "working"},
        {"content": "b", "tags": ["ops"], "priority": "low", "source": "tool"},
        {"content": "c", "tags": ["db"], "layer": "meta", "confidence": 0.5},
    ])

    async def contents(**filters: object) -> list[str]:
        failed, data = await agent.crud(action="list", filters=filters)
        assert not failed, data
        return sorted(e["content"] for e in data["items"])

    assert await contents(tags=["ops"]) == ["a", "b"]
    assert await contents(tags=["ops", "db"]) == ["a"]
    assert await contents(layer="meta") == ["c"]
    assert await contents(priority="high") == ["a"]
    assert await contents(source="tool") == ["b"]
    assert await contents(owner_agent_id="alice") == ["a", "b", "c"]
    assert await contents(owner_agent_id="bob") == []
    assert await contents(conflict=False) == ["a", "b", "c"]
    assert await contents(session_id="s-1") == []
    assert await contents(created_after="2000-01-01T00:00:00Z") == ["a", "b", "c"]
    assert await contents(created_before="2000-01-01T00:00:00Z") == []
    failed, data = await agent.crud(action="list", layer="working")
    assert [e["content"] for e in data["items"]] == ["a"]


async def test_cursor_reused_with_other_filters_is_invalid_params(agent: Agent) -> None:
    await agent.crud(action="create", items=[{"content": f"n{i}", "tags": ["t"]} for i in range(3)])
    _, data = await agent.crud(action="list", limit=1, filters={"tags": ["t"]})
    cursor = data["next_cursor"]
    failed, data = await agent.crud(action="list", limit=1, cursor=cursor, filters={"tags": ["t"]})
    assert not failed
    failed, data = await agent.crud(action="list", limit=1, cursor=cursor)
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert data["errors"][0]["details"]["field"] == "cursor"


async def test_cursor_of_another_caller_is_invalid_params(agent: Agent) -> None:
    await agent.crud(action="create", items=[{"content": f"n{i}"} for i in range(3)])
    _, data = await agent.crud(action="list", limit=1)
    bob = agent.as_({"agent_id": "bob", "system_type": "sys1", "team": "red"})
    failed, data = await bob.crud(action="list", namespace="bob", cursor=data["next_cursor"])
    assert failed and data["errors"][0]["details"]["field"] == "cursor"


@pytest.mark.parametrize("tamper", ["flip_payload", "garbage", "truncate"])
async def test_tampered_or_malformed_cursor_is_invalid_params(agent: Agent, tamper: str) -> None:
    await agent.crud(action="create", items=[{"content": f"n{i}"} for i in range(3)])
    _, data = await agent.crud(action="list", limit=1)
    cursor: str = data["next_cursor"]
    payload, sig = cursor.split(".")
    if tamper == "flip_payload":
        decoded = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        decoded["i"] = "mem_ZZZZ"
        payload = base64.urlsafe_b64encode(json.dumps(decoded).encode()).rstrip(b"=").decode()
        cursor = f"{payload}.{sig}"
    elif tamper == "garbage":
        cursor = "%%%not-a-cursor%%%"
    else:
        cursor = cursor[: len(cursor) // 2]
    failed, data = await agent.crud(action="list", limit=1, cursor=cursor)
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"


async def test_cursor_outside_list_is_invalid(agent: Agent) -> None:
    failed, data = await agent.crud(action="read", items=[{"id": "x"}], cursor="abc")
    assert failed and data["errors"][0]["details"]["field"] == "cursor"


@pytest.mark.parametrize("limit", [0, 101, -1])
async def test_limit_outside_one_to_hundred_is_invalid(agent: Agent, limit: int) -> None:
    failed, data = await agent.crud(action="list", limit=limit)
    assert failed and data["errors"][0]["details"]["field"] == "limit"
