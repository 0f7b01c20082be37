"""An update embeds an entry again only when its content changed: tags, priority, confidence,
layer, domain, expiry or a read list are not embedded, so such an update queues nothing for the
vector index and the stored vector stays. On SQLite and PostgreSQL, through the MCP client."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from agent_memory.config import Settings
from agent_memory.tools.server import create_server
from tests.conftest import Agent, chosen_backends, scalar, store_settings

pytestmark = pytest.mark.anyio


def _queued(settings: Settings, entry_id: str) -> int:
    return int(scalar(settings, f"SELECT COUNT(*) FROM vector_outbox WHERE entry_id = '{entry_id}'"))


def _vector(settings: Settings, entry_id: str) -> object:
    column = "embedding::text" if settings.backend == "postgres" else "vector"
    return scalar(settings, f"SELECT {column} FROM entry_vectors WHERE entry_id = '{entry_id}'")


async def _update(agent: Agent, entry: dict, **fields: object) -> dict:
    failed, data = await agent.crud(action="update", items=[{"id": entry["id"], **fields}], if_match=entry["etag"])
    assert not failed and not data["errors"], data
    return data["items"][0]


@pytest.mark.parametrize("store_backend", chosen_backends(), indirect=True)
async def test_an_update_queues_a_new_embedding_only_when_the_content_changes(
        tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> None:
    settings = store_settings(request, tmp_path / "data", store_backend)  # no vector index: the queue stays
    async with Client(create_server(settings), mode="auto") as client:
        agent = Agent(client)
        entry = await agent.create("the walrus sleeps on the ice floe")
        assert _queued(settings, entry["id"]) == 1
        entry = await _update(agent, entry, tags=["arctic"], priority="high", confidence=0.5, domain="user_pref",
                              layer="long_term", expires_at="2099-01-01T00:00:00Z")
        entry = await _update(agent, entry, content="the walrus sleeps on the ice floe")  # the same text again
        assert entry["tags"] == ["arctic"] and entry["version"] == 3
        assert _queued(settings, entry["id"]) == 1
        entry = await _update(agent, entry, content="the walrus swims under the ice")
        assert _queued(settings, entry["id"]) == 2


@pytest.mark.parametrize("store_backend", chosen_backends(), indirect=True)
async def test_an_update_of_tags_keeps_the_stored_vector_and_one_of_content_replaces_it(
        tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> None:
    settings = store_settings(request, tmp_path / "data", store_backend, vector_backend="chroma")
    async with Client(create_server(settings), mode="auto") as client:
        agent = Agent(client)

        async def indexed(entry_id: str) -> object:
            with anyio.fail_after(60):
                while _queued(settings, entry_id) or _vector(settings, entry_id) is None:
                    await anyio.sleep(0.05)
            return _vector(settings, entry_id)

        entry = await agent.create("the walrus sleeps on the ice floe")
        first = await indexed(entry["id"])
        entry = await _update(agent, entry, tags=["arctic"], priority="high")
        assert _queued(settings, entry["id"]) == 0 and _vector(settings, entry["id"]) == first
        entry = await _update(agent, entry, content="a recipe for lemon cake")
        assert await indexed(entry["id"]) != first
