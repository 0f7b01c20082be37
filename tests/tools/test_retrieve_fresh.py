"""Read-your-writes by meaning through memory_retrieve, on SQLite and PostgreSQL: memories the
vector index has not reached yet are embedded by the call itself, and what it leaves out (past
retrieval_inline_embed_max) is searched by keyword only, counted and said in `degraded`.

No timing is asserted: a hundred memories written in a burst are far more than the indexer can
embed before the next call arrives (about a second of CPU), so most are still queued when the
retrieve reads them (the assertions allow for any it did reach)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from agent_memory.tools.server import create_server
from tests.conftest import Agent, store_settings
from tests.tools.test_retrieve import retrieve

pytestmark = pytest.mark.anyio

FILLER = [f"Survey {n}: a {animal} was counted near marker {n}." for n, animal in
          enumerate(["otter", "heron", "badger", "lynx", "marten", "plover", "newt", "vole", "stoat", "wren"] * 10)]
TARGET = "The intern moved the weekly retro to Thursday afternoons."
QUESTION = "When does our regular team retrospective happen now?"  # no word in common with TARGET


def by_meaning_alone(item: dict) -> bool:
    """Found by meaning, with no keyword score: what ranked it first was its vector (no raw
    similarity is compared with a constant a model release could move)."""
    return item["score_parts"]["semantic"] > 0 and item["score_parts"]["keyword"] == 0


async def agent_with(request: pytest.FixtureRequest, data: Path, store_backend: str, **overrides: Any
                     ) -> AsyncIterator[Agent]:
    settings = store_settings(request, data, store_backend, vector_backend="chroma", **overrides)
    async with Client(create_server(settings), mode="auto") as client:
        agent = Agent(client)
        await agent.create("Warm-up: the vector model is loaded.")
        with anyio.fail_after(60):  # the model is loaded (not timed: only waited for)
            while (await retrieve(agent, query="is the model loaded"))[1]["degraded"] is not None:
                await anyio.sleep(0.1)
        yield agent


@pytest.fixture
async def unbounded(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> AsyncIterator[Agent]:
    # No time limit on the in-line embedding: every queued memory is covered, however slow the machine.
    async for agent in agent_with(request, tmp_path / "data", store_backend, retrieval_inline_embed_ms=60_000):
        yield agent


@pytest.fixture
async def two_inline(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> AsyncIterator[Agent]:
    async for agent in agent_with(request, tmp_path / "data", store_backend, retrieval_inline_embed_max=2):
        yield agent


async def write_burst(agent: Agent) -> dict:
    """A hundred memories (ten calls of ten), then the target: nearly all still queued."""
    for start in range(0, len(FILLER), 10):
        failed, data = await agent.crud(action="create", items=[{"content": text} for text in FILLER[start:start + 10]])
        assert not failed, data
    return await agent.create(TARGET)


async def test_memories_just_written_are_found_by_meaning_at_once(unbounded: Agent) -> None:
    target = await write_burst(unbounded)
    failed, data = await retrieve(unbounded, query=QUESTION, min_score=0)
    assert not failed
    assert data["items"][0]["id"] == target["id"], data["items"][:2]
    assert by_meaning_alone(data["items"][0])  # no word in common
    assert data["keyword_only"] == 0 and data["degraded"] is None  # every queued memory was covered
    failed, data = await retrieve(unbounded, query="a badger seen by a survey marker", mode="semantic", min_score=0)
    assert not failed and data["degraded"] is None
    assert "badger" in data["items"][0]["content"]  # an older one of the burst, by meaning too


async def test_what_the_in_line_limit_leaves_out_is_counted_and_searched_by_keyword(two_inline: Agent) -> None:
    target = await write_burst(two_inline)
    failed, data = await retrieve(two_inline, query=QUESTION, min_score=0)
    assert not failed
    assert data["items"][0]["id"] == target["id"]  # the newest are covered first
    assert by_meaning_alone(data["items"][0])
    waiting = data["keyword_only"]
    assert 0 < waiting <= len(FILLER) - 1  # all but the two newest, less any the indexer reached meanwhile
    assert data["degraded"] == (f"{waiting} memories written moments ago are not yet searchable by meaning "
                                "(searched by keyword only)")
    # Keywords still cover every memory, queued or not.
    failed, data = await retrieve(two_inline, query="Survey 0 otter marker 0", min_score=0)
    assert not failed and FILLER[0] in [item["content"] for item in data["items"]]
