"""Dates at the edges of the calendar: refused clearly (never INTERNAL), stored so they sort."""

from __future__ import annotations

import pytest

from tests.conftest import Agent

pytestmark = pytest.mark.anyio

LATE = "9999-12-31T23:59:59-14:00"   # past year 9999 once in UTC
EARLY = "0001-01-01T00:00:00+14:00"  # before year 1 once in UTC


def _refused(failed: bool, data: dict, field: str) -> None:
    assert failed, data
    [error] = data["errors"]
    assert error["code"] == "INVALID_PARAMS", error
    assert error["details"]["field"] == field and "9999-12-31" in error["message"]


async def test_out_of_range_dates_are_invalid_params_everywhere(agent: Agent) -> None:
    _refused(*await agent.crud(action="create", items=[{"content": "x", "expires_at": LATE}]), "expires_at")
    entry = await agent.create("kept")
    _refused(*await agent.crud(action="update", items=[{"id": entry["id"], "expires_at": LATE}]), "expires_at")
    for name, value in (("created_after", EARLY), ("created_before", LATE)):
        _refused(*await agent.crud(action="list", filters={name: value}), f"filters.{name}")
    failed, data = await agent.reflect(action="log", session_id="s1",
                                       turns=[{"role": "user", "content": "hi", "at": LATE}])
    _refused(failed, data, "turns[0].at")
    failed, data = await agent.crud(action="list")
    assert not failed and [e["content"] for e in data["items"]] == ["kept"]  # nothing else was written


async def test_a_turn_before_year_1000_is_stored_with_four_digits_and_sorts_in_time(agent: Agent) -> None:
    await agent.log("old", {"role": "user", "content": "an ancient remark", "at": "0999-01-02T00:00:00Z"},
                    {"role": "user", "content": "a recent remark", "at": "2024-05-01T10:00:00+02:00"})
    failed, data = await agent.crud(action="list", filters={"session_id": "old"})
    assert not failed
    assert [(e["content"], e["created_at"]) for e in data["items"]] == [
        ("a recent remark", "2024-05-01T08:00:00.000000Z"), ("an ancient remark", "0999-01-02T00:00:00.000000Z")]
    failed, data = await agent.crud(action="list", filters={"created_before": "1000-01-01T00:00:00Z"})
    assert [e["content"] for e in data["items"]] == ["an ancient remark"]
    failed, data = await agent.crud(action="list", filters={"created_after": "1500-01-01T00:00:00Z"})
    assert [e["content"] for e in data["items"]] == ["a recent remark"]


async def test_the_extreme_valid_dates_are_accepted(agent: Agent) -> None:
    entry = await agent.create("lasts", item={"expires_at": "9999-12-31T23:59:59.999999Z"})
    assert entry["expires_at"] == "9999-12-31T23:59:59.999999Z"
    failed, data = await agent.crud(action="list", filters={"created_after": "0001-01-01T00:00:00Z"})
    assert not failed and [e["id"] for e in data["items"]] == [entry["id"]]
