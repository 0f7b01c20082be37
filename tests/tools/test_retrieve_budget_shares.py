"""memory_retrieve's budget shares (issue 25.1): the context budget split across the caller's agent
memory, its team's and global (the three-tier design's task 40% / project 40% / global 20%),
through a real MCP client session on each record store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from agent_memory.config import ConfigError, load_settings
from agent_memory.contracts.retrieve import MemoryRetrieveResult
from agent_memory.core.model.models import Scope
from agent_memory.core.recall.budget import split
from agent_memory.tools.server import create_server
from tests.conftest import Agent, identity, store_settings

pytestmark = pytest.mark.anyio

PER_TIER = 16
BUDGET = 4000
WORDS = ("staging", "rollback", "canary", "approval", "secrets", "cache", "artifacts", "migrations",
         "alerts", "timeouts", "retries", "mirrors", "runners", "quotas", "tokens", "logs")
TIER_ARGS = {"agent": {}, "team": {"namespace": "red"}, "global": {"namespace": "global"}}


def content(tier: str, i: int, rare: bool) -> str:
    a, b = WORDS[i % len(WORDS)], WORDS[(i * 7 + 3) % len(WORDS)]
    extra = " zebra" if rare else ""
    return f"The deploy pipeline ({tier} note {i:02d}) covers {a} then {b} for release train {i * 13}{extra}."


@pytest.fixture
async def boss(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> AsyncIterator[Agent]:
    """A sys4 of team red (who may read and write all three tiers) and PER_TIER memories in each
    tier, all about the deploy pipeline; only one global memory mentions a zebra, every agent and
    team memory does."""
    settings = store_settings(request, tmp_path / "data", store_backend)
    async with Client(create_server(settings), mode="auto") as client:
        agent = Agent(client, identity("boss", "sys4", "red"))
        for tier, extra in TIER_ARGS.items():
            layer = {} if tier == "agent" else {"layer": "long_term"}
            notes = [{"content": content(tier, i, tier != "global" or i == 0)} for i in range(PER_TIER)]
            for start in range(0, PER_TIER, 8):
                failed, data = await agent.crud(action="create", scope=tier, items=notes[start:start + 8],
                                                **extra, **layer)
                assert not failed, data
        yield agent


async def retrieve(agent: Agent, **arguments: Any) -> tuple[bool, dict]:
    return await agent.call("memory_retrieve", MemoryRetrieveResult,
                            {"mode": "keyword", "limit": 50, "max_chars": BUDGET, **arguments})


def chars_by_tier(context: str) -> dict[str, int]:
    """Characters of the block's memory lines (with their line break) per tier."""
    counts = {"agent": 0, "team": 0, "global": 0}
    for line in context.splitlines()[1:-1]:
        counts[line[3:].split("/", 1)[0]] += len(line) + 1
    return counts


def shares_of_block(context: str) -> dict[str, float]:
    counts = chars_by_tier(context)
    total = sum(counts.values())
    return {tier: n / total for tier, n in counts.items()}


def longest_line(context: str) -> int:
    return max(len(line) + 1 for line in context.splitlines())


async def test_default_split_is_40_40_20_by_characters(boss: Agent) -> None:
    failed, data = await retrieve(boss, query="deploy pipeline")
    assert not failed, data
    shares = shares_of_block(data["context"])
    assert abs(shares["agent"] - 0.4) <= 0.03 and abs(shares["team"] - 0.4) <= 0.03
    assert abs(shares["global"] - 0.2) <= 0.03
    assert data["used_chars"] <= BUDGET and BUDGET - data["used_chars"] < longest_line(data["context"])
    assert data["dropped"] == 3 * PER_TIER - len(data["items"]) > 0
    # The block keeps the ranked order: the items (and lines) are best first.
    scores = [item["score"] for item in data["items"]]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("shares", [{"agent": 0.2, "team": 0.3, "global": 0.5}, {"agent": 2, "team": 1, "global": 1}])
async def test_given_shares_are_normalised_and_followed(boss: Agent, shares: dict[str, float]) -> None:
    failed, data = await retrieve(boss, query="deploy pipeline", budget_shares=shares)
    assert not failed, data
    total = sum(shares.values())
    got = shares_of_block(data["context"])
    assert all(abs(got[tier] - share / total) <= 0.03 for tier, share in shares.items()), got
    assert BUDGET - data["used_chars"] < longest_line(data["context"])


async def test_an_empty_tier_leaves_the_whole_budget_to_the_others(boss: Agent) -> None:
    # Global is not searched: its 20% goes to agent and team in proportion (40:40, half each).
    failed, data = await retrieve(boss, query="deploy pipeline", scopes=["agent", "team"])
    assert not failed, data
    got = shares_of_block(data["context"])
    assert got["global"] == 0 and abs(got["agent"] - 0.5) <= 0.03 and abs(got["team"] - 0.5) <= 0.03
    assert data["used_chars"] <= BUDGET and BUDGET - data["used_chars"] < longest_line(data["context"])


async def test_a_tier_that_needs_less_leaves_the_rest_in_proportion(boss: Agent) -> None:
    # Only one global memory mentions a zebra: it is injected whole, and agent and team share the rest.
    failed, data = await retrieve(boss, query="zebra")
    assert not failed, data
    counts = chars_by_tier(data["context"])
    assert [i["content"] for i in data["items"] if i["scope"] == "global"] == [content("global", 0, True)]
    assert abs(counts["agent"] - counts["team"]) < longest_line(data["context"])
    assert BUDGET - data["used_chars"] < longest_line(data["context"])


async def test_when_everything_fits_the_shares_change_nothing(boss: Agent) -> None:
    big = {"max_chars": 100_000}
    _, plain = await retrieve(boss, query="deploy pipeline", budget_shares={"agent": 1}, **big)
    _, split_data = await retrieve(boss, query="deploy pipeline", **big)
    assert split_data["context"] == plain["context"] and split_data["dropped"] == 0
    assert len(split_data["items"]) == 3 * PER_TIER
    # The default is the setting's 40/40/20.
    _, default = await retrieve(boss, query="deploy pipeline")
    _, explicit = await retrieve(boss, query="deploy pipeline", budget_shares={"agent": 0.4, "team": 0.4,
                                                                                "global": 0.2})
    assert default["context"] == explicit["context"]


@pytest.mark.parametrize(("shares", "field"), [
    ({"agent": -0.1, "team": 0.5}, "budget_shares.agent"),
    ({"agent": "much"}, "budget_shares.agent"),
    ({"agent": True}, "budget_shares.agent"),
    ({"planet": 1.0}, "budget_shares.planet.[key]"),
    ({"agent": 0, "team": 0, "global": 0}, "budget_shares"),
    ({}, "budget_shares"),
    ([0.4, 0.4, 0.2], "budget_shares"),
    ("agent=0.4,team=0.4,global=0.2", "budget_shares"),
])
async def test_bad_budget_shares_are_invalid_params(boss: Agent, shares: object, field: str) -> None:
    failed, data = await retrieve(boss, query="deploy pipeline", budget_shares=shares)
    assert failed and data["items"] == [] and data["context"] == ""
    error = data["errors"][0]
    assert error["code"] == "INVALID_PARAMS" and error["details"]["field"] == field
    assert "budget_shares" in error["message"]


@pytest.mark.parametrize("value", ["agent=-1", "agent=0,team=0", "agent=0.4,planet=1", "agent:1", "agent=x"])
def test_a_bad_default_stops_the_server_naming_the_setting(value: str) -> None:
    with pytest.raises(ConfigError, match="retrieval_budget_shares"):
        load_settings(environ={"MEMORY_RETRIEVAL_BUDGET_SHARES": value})


def test_the_setting_is_read_in_canonical_form() -> None:
    env = {"MEMORY_RETRIEVAL_BUDGET_SHARES": " team=1 , agent=3"}
    assert load_settings(environ=env).retrieval_budget_shares == "agent=3,team=1,global=0"


def test_split_gives_a_sated_tiers_rest_to_the_others_in_proportion() -> None:
    shares = {Scope.AGENT: 0.4, Scope.TEAM: 0.4, Scope.GLOBAL: 0.2}
    assert split({Scope.AGENT: 5000, Scope.TEAM: 5000, Scope.GLOBAL: 5000}, shares, 1000) == {
        Scope.AGENT: 400, Scope.TEAM: 400, Scope.GLOBAL: 200}
    assert split({Scope.AGENT: 100, Scope.TEAM: 5000, Scope.GLOBAL: 5000}, shares, 1000) == {
        Scope.AGENT: 100, Scope.TEAM: 600, Scope.GLOBAL: 300}
    assert split({Scope.AGENT: 100, Scope.TEAM: 150, Scope.GLOBAL: 5000}, shares, 1000) == {
        Scope.AGENT: 100, Scope.TEAM: 150, Scope.GLOBAL: 750}
    assert split({Scope.AGENT: 5000, Scope.TEAM: 0, Scope.GLOBAL: 5000}, shares, 900) == {
        Scope.AGENT: 600, Scope.TEAM: 0, Scope.GLOBAL: 300}
