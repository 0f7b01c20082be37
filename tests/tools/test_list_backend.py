"""MEMORY_BACKEND=list: the same tool on an in-memory store, gone at exit."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from agent_memory.tools.server import create_server
from tests.conftest import Agent, make_settings

pytestmark = pytest.mark.anyio


async def test_list_backend_serves_memory_crud_and_keeps_nothing(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, backend="list")
    async with Client(create_server(settings)) as client:
        agent = Agent(client)
        entry = await agent.create("throwaway")
        _, data = await agent.crud(action="list")
        assert [e["id"] for e in data["items"]] == [entry["id"]]
    async with Client(create_server(settings)) as client:
        _, data = await Agent(client).crud(action="list")
        assert data["items"] == []
    assert not any(tmp_path.rglob("*.db"))
