"""memory_retrieve's plan stage: what a request leaves out comes from RetrievalDefaults (the one
place request defaults live), what it gives wins, and the budget of max_chars / max_tokens."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.core.model.commands import Call
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.models import Caller, Scope, SystemType
from agent_memory.core.recall.retrieval_plan import RetrievalDefaults, RetrievalRequest, plan

CALL = Call(Caller("ada", SystemType.SYS3, "red"), "req_1", tool="memory_retrieve")
NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
DEFAULTS = RetrievalDefaults(limit=7, max_chars=3000, per_entry_max_chars=500, min_score=0.45, relative_floor=0.3,
                             budget_shares={Scope.AGENT: 0.5, Scope.TEAM: 0.5, Scope.GLOBAL: 0.0})


def test_what_a_request_leaves_out_comes_from_the_defaults() -> None:
    planned = plan(CALL, RetrievalRequest(query="otters"), DEFAULTS, depth=100, now=NOW)
    assert (planned.limit, planned.budget_chars, planned.per_entry_max_chars) == (7, 3000, 500)
    assert (planned.min_score, planned.relative_floor, planned.shares) == (0.45, 0.3, DEFAULTS.budget_shares)
    assert planned.depth == 100 and planned.mode == "hybrid" and planned.terms == ["otters"]


def test_what_a_request_gives_wins_zero_floors_included() -> None:
    shares = {Scope.AGENT: 1.0, Scope.TEAM: 0.0, Scope.GLOBAL: 0.0}
    planned = plan(CALL, RetrievalRequest(query="otters", limit=40, max_chars=900, per_entry_max_chars=60,
                                          min_score=0.0, relative_floor=0.0, budget_shares=shares, mode="keyword"),
                   DEFAULTS, depth=30, now=NOW)
    assert (planned.limit, planned.budget_chars, planned.per_entry_max_chars) == (40, 900, 60)
    assert (planned.min_score, planned.relative_floor, planned.shares) == (0.0, 0.0, shares)
    assert planned.depth == 40  # never fewer candidates than the limit
    assert planned.keyword and not planned.semantic


@pytest.mark.parametrize(("max_chars", "max_tokens", "budget"), [
    (None, None, 3000),  # the default
    (None, 50, 200),  # tokens alone: 4 characters each, even above or below the default
    (None, 1000, 4000),
    (800, None, 800),
    (800, 50, 200),  # both: the smaller
    (800, 1000, 800),
])
def test_budget_from_max_chars_and_max_tokens(max_chars: int | None, max_tokens: int | None, budget: int) -> None:
    request = RetrievalRequest(query="otters", max_chars=max_chars, max_tokens=max_tokens)
    assert plan(CALL, request, DEFAULTS, depth=100, now=NOW).budget_chars == budget


def test_an_empty_query_is_invalid_params() -> None:
    with pytest.raises(InvalidParams) as caught:
        plan(CALL, RetrievalRequest(query="  "), DEFAULTS, depth=100, now=NOW)
    assert caught.value.details.get("field") == "query"


def test_a_query_without_keyword_terms_is_searched_by_meaning_only() -> None:
    planned = plan(CALL, RetrievalRequest(query="?!", mode="hybrid"), DEFAULTS, depth=100, now=NOW)
    assert planned.terms == [] and not planned.keyword and planned.semantic


@pytest.mark.parametrize(("arguments", "relative_floor"), [
    ({}, 0.3),  # the default
    ({"min_score": 0.2}, 0.3),  # a lower, not a zero, min_score keeps it
    ({"min_score": 0.0}, 0.0),  # asked for the nearest memories: no relative floor
    ({"since": "2026-05-11"}, 0.0),  # a time window: everything in it that matches
    ({"until": "2026-05-11"}, 0.0),
    ({"min_score": 0.0, "relative_floor": 0.5}, 0.5),  # given explicitly, it applies
    ({"since": "2026-05-11", "relative_floor": 0.4}, 0.4),
])
def test_the_relative_floor_is_off_when_the_caller_asks_for_the_nearest_or_a_window(
        arguments: dict, relative_floor: float) -> None:
    planned = plan(CALL, RetrievalRequest(query="otters", **arguments), DEFAULTS, depth=100, now=NOW)
    assert planned.relative_floor == relative_floor
