"""memory_retrieve's relative floor (weak memories are not injected beside a strong one) and the
rounding of scores, through the MCP tool."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from agent_memory.config import load_settings
from agent_memory.contracts.retrieve import MemoryRetrieveResult
from agent_memory.tools.server import create_server
from tests.conftest import Agent, store_settings

pytestmark = pytest.mark.anyio

# One memory answers the question; the others are about the same person and nothing else.
ALLERGY = "Alice is allergic to peanuts."
ABOUT_ALICE = ("Alice lives in Lisbon with her two cats.", "Alice speaks fluent Spanish.",
               "Alice works as a backend engineer.", "Alice plays the cello on weekends.",
               "Alice's favourite colour is green.", "Alice runs a half marathon every spring.",
               "Alice drives an electric car.", "Alice studied physics in Porto.",
               "Alice has a younger brother called Tom.")
QUESTION = "Is Alice allergic to anything?"


@pytest.fixture
async def alice(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> AsyncIterator[Agent]:
    """A server with semantic search (the default floors apply) holding the ten facts about Alice."""
    settings = store_settings(request, tmp_path / "data", store_backend, vector_backend="chroma")
    async with Client(create_server(settings), mode="auto") as client:
        agent = Agent(client)
        failed, _ = await agent.crud(action="create", items=[{"content": c} for c in (*ABOUT_ALICE, ALLERGY)])
        assert not failed
        yield agent


async def retrieve(agent: Agent, **arguments: Any) -> tuple[bool, dict]:
    result = await agent.client.call_tool("memory_retrieve", arguments)
    MemoryRetrieveResult.model_validate(result.structured_content, strict=True)
    assert json.loads(result.content[0].text) == result.structured_content
    return bool(result.is_error), result.structured_content


async def by_meaning(agent: Agent, **arguments: Any) -> dict:
    """Retrieve until semantic search answers (the model loads in the background; bounded wait)."""
    with anyio.fail_after(120):
        while True:
            failed, data = await retrieve(agent, **arguments)
            assert not failed, data
            if data["degraded"] is None:
                return data
            await anyio.sleep(0.2)


async def test_weak_memories_are_not_injected_beside_a_strong_one_by_default(alice: Agent) -> None:
    data = await by_meaning(alice, query=QUESTION)
    floor = load_settings(environ={}).retrieval_relative_floor
    assert data["relative_floor"] == floor > 0
    assert data["items"][0]["content"] == ALLERGY
    top = data["items"][0]["score"]
    assert all(item["score"] >= floor * top for item in data["items"])
    # At most the allergy and the memory written just before it (ranked up as its neighbour).
    assert len(data["items"]) <= 2 and "Spanish" not in data["context"] and "Lisbon" not in data["context"]
    assert data["withheld"] == 10 - len(data["items"])  # said, not silently left out


@pytest.mark.parametrize("question", ["does alice have any food allergies?", "Does Alice have any food allergies?"])
async def test_a_word_every_memory_holds_lifts_none_of_them(alice: Agent, question: str) -> None:
    # Issue 23.4's example: of the query's words only "alice" is stored, and in every fact, so
    # keyword search scores all ten alike; that tells none apart, so it counts for none and the
    # meaning decides. The fact written just before the allergy may come along as its neighbour.
    data = await by_meaning(alice, query=question)
    assert data["items"][0]["content"] == ALLERGY
    assert [item["content"] for item in data["items"][1:]] in ([], [ABOUT_ALICE[-1]])
    assert data["withheld"] == 10 - len(data["items"])
    for word in ("Spanish", "Lisbon", "cello", "marathon", "green", "engineer"):
        assert word not in data["context"]
    every = await by_meaning(alice, query=question, relative_floor=0)
    assert len(every["items"]) == 10 and every["items"][0]["content"] == ALLERGY
    for item in every["items"]:
        parts = item["score_parts"]
        assert parts["keyword"] == 0  # the same keyword score for every fact: no weight
        # A neighbour adds at most the memory's own relevance: it never lifts one by itself.
        assert parts["neighbors"] <= parts["relevance"] + 1e-4


async def test_relative_floor_zero_injects_every_nearest_memory(alice: Agent) -> None:
    await by_meaning(alice, query=QUESTION)
    data = await by_meaning(alice, query=QUESTION, relative_floor=0)
    assert data["relative_floor"] == 0 and data["withheld"] == 0
    assert data["items"][0]["content"] == ALLERGY and len(data["items"]) == 10
    assert "Alice speaks fluent Spanish." in data["context"]


async def test_a_higher_relative_floor_leaves_out_more(alice: Agent) -> None:
    await by_meaning(alice, query=QUESTION)
    loose = await by_meaning(alice, query=QUESTION, relative_floor=0.2)
    strict = await by_meaning(alice, query=QUESTION, relative_floor=1)
    assert len(loose["items"]) > len(strict["items"]) >= 1
    assert strict["items"][0]["content"] == ALLERGY and strict["withheld"] == 10 - len(strict["items"])


async def test_every_score_and_score_part_is_rounded_to_four_decimals(alice: Agent) -> None:
    data = await by_meaning(alice, query=QUESTION, relative_floor=0)
    for item in data["items"]:
        values = [item["score"], *item["score_parts"].values()]
        assert all(value == round(value, 4) for value in values), item
        parts = item["score_parts"]
        total = sum(parts[k] for k in ("relevance", "neighbors", "recency", "priority", "confidence", "scope"))
        assert abs(item["score"] - total) <= 4e-4  # the score is the sum of its parts, each rounded


async def test_keyword_only_answers_are_not_cut_and_report_a_relative_floor_of_0(agent: Agent) -> None:
    for content in ("Otters hold hands while sleeping.", "Otters have dense fur.", "Sea otters use rocks as tools."):
        await agent.create(content)
    failed, data = await retrieve(agent, query="sleeping otters hold hands")  # no vector index: keyword-only
    assert not failed and data["degraded"] is not None
    assert data["relative_floor"] == 0 and data["withheld"] == 0 and len(data["items"]) == 3


@pytest.mark.parametrize("bad", [-0.1, 1.5, "high", "0.5", True, [0.5]])
async def test_relative_floor_outside_0_to_1_or_not_a_number_is_invalid_params(agent: Agent, bad: Any) -> None:
    failed, data = await retrieve(agent, query="anything", relative_floor=bad)
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert data["errors"][0]["details"]["field"] == "relative_floor"


async def test_min_score_zero_gives_the_nearest_memories_unless_a_relative_floor_is_given(alice: Agent) -> None:
    await by_meaning(alice, query=QUESTION)
    nearest = await by_meaning(alice, query=QUESTION, min_score=0)
    assert nearest["relative_floor"] == 0 and nearest["withheld"] == 0 and len(nearest["items"]) == 10
    assert nearest["items"][0]["content"] == ALLERGY
    floor = load_settings(environ={}).retrieval_relative_floor
    cut = await by_meaning(alice, query=QUESTION, min_score=0, relative_floor=floor)
    assert cut["relative_floor"] == floor and len(cut["items"]) <= 2 and cut["withheld"] == 10 - len(cut["items"])


DECISIONS = (("We decided the billing service stays on PostgreSQL.", "2026-05-04T10:00:00Z"),
             ("We decided to move the nightly build to 02:00.", "2026-05-11T09:30:00Z"),
             ("We decided the release train leaves every second Tuesday.", "2026-05-12T16:00:00Z"),
             ("We decided the design review happens on Thursdays.", "2026-05-20T08:00:00Z"))


@pytest.fixture
async def decided(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> AsyncIterator[Agent]:
    """Four decisions logged as session turns, a week or so apart, on a server with semantic search."""
    settings = store_settings(request, tmp_path / "data", store_backend, vector_backend="chroma")
    async with Client(create_server(settings), mode="auto") as client:
        agent = Agent(client)
        await agent.log("planning", *[{"role": "user", "content": text, "at": at} for text, at in DECISIONS])
        yield agent


async def test_a_time_window_gives_every_memory_in_it_that_matches(decided: Agent) -> None:
    question = {"query": "What did we decide?", "min_score": 0, "limit": 20}
    everything = await by_meaning(decided, **question)
    assert sorted(i["content"] for i in everything["items"]) == sorted(text for text, _ in DECISIONS)
    week = await by_meaning(decided, **question, since="2026-05-11", until="2026-05-18")
    assert week["relative_floor"] == 0 and week["withheld"] == 0
    assert sorted(i["content"] for i in week["items"]) == sorted(text for text, _ in DECISIONS[1:3])
    # Without min_score 0 the window alone turns the relative floor off too.
    window = await by_meaning(decided, query="What did we decide?", since="2026-05-11", until="2026-05-18")
    assert window["relative_floor"] == 0
    assert {i["content"] for i in window["items"]} <= {text for text, _ in DECISIONS[1:3]}


async def test_the_chain_a_caller_asks_for_is_never_cut_by_the_relative_floor(
        tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> None:
    settings = store_settings(request, tmp_path / "data", store_backend, vector_backend="chroma")
    async with Client(create_server(settings), mode="auto") as client:
        agent = Agent(client)
        facts = ("The API server listens on port 8080.", "The API server listens on port 8081.",
                 "The API server listens on port 9090.")
        ids = []
        for session, fact in enumerate(facts):  # each change of mind supersedes the one before
            failed, data = await agent.reflect(action="reflect", session_id=f"s{session}", facts=[fact])
            assert not failed and len(data["items"]) == 1, data
            ids.append(data["items"][0]["id"])
        await agent.create("The API gateway rate limit is 600 requests per minute.")
        await agent.create("Lunch on Fridays is usually pizza.")
        current = await by_meaning(agent, query="Which port does the API server listen on?", relative_floor=1)
        assert [i["id"] for i in current["items"]] == [ids[2]]
        # relative_floor 1 keeps only the best by score: its chain comes along, nothing else does.
        chain = await by_meaning(agent, query="Which port does the API server listen on?", relative_floor=1,
                                 include_superseded=True)
        assert sorted(i["id"] for i in chain["items"]) == sorted(ids)
        assert "rate limit" not in chain["context"] and "pizza" not in chain["context"]
        by_id = {i["id"]: i for i in chain["items"]}
        assert (by_id[ids[0]]["superseded_by"], by_id[ids[1]]["superseded_by"]) == (ids[1], ids[2])
        assert chain["withheld"] >= 1  # the gateway's limit was left out, and said
