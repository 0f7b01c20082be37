"""Fixtures: real SQLite files in tmp_path, the real server, the SDK's in-memory client."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from pydantic import BaseModel

from agent_memory.config import Settings, load_settings
from agent_memory.tools.contracts import MemoryCrudResult
from agent_memory.tools.reflect_contracts import MemoryReflectResult
from agent_memory.tools.server import create_server

IDENTITY_KEY = "agent-memory/identity"


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on anyio's pytest runner (`pytestmark = pytest.mark.anyio`): it keeps a
    fixture's setup, the test and the fixture's teardown in one task, as the SDK's cancel scopes
    require."""
    return "asyncio"


def identity(agent_id: str, system_type: str = "sys1", team: str = "red", skills: list[str] | None = None) -> dict:
    data: dict[str, Any] = {"agent_id": agent_id, "system_type": system_type, "team": team}
    if skills is not None:
        data["skills"] = skills
    return data


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {"data_dir": str(data_dir), "agent_id": "alice", "system_type": "sys1", "team": "red",
                                 "rate_limit_per_second": 0, "vector_backend": "none"}
    values.update(overrides)
    return load_settings(environ={}, overrides=values)


class Agent:
    """One caller on a client: sends its identity in every request's `_meta` (or none)."""

    def __init__(self, client: Client, ident: dict | None = None) -> None:
        self.client = client
        self.ident = ident

    async def call(self, tool: str, contract: type[BaseModel], arguments: dict[str, Any]) -> tuple[bool, dict]:
        meta = {IDENTITY_KEY: self.ident} if self.ident is not None else None
        result = await self.client.call_tool(tool, arguments, meta=meta)
        assert result.structured_content is not None
        # Every answer must have the typed shape of the contract, records included.
        contract.model_validate(result.structured_content, strict=True)
        assert json.loads(result.content[0].text) == result.structured_content
        return bool(result.is_error), result.structured_content

    async def crud(self, **arguments: Any) -> tuple[bool, dict]:
        return await self.call("memory_crud", MemoryCrudResult, arguments)

    async def create(self, content: str = "a memory", **arguments: Any) -> dict:
        item = {"content": content, **arguments.pop("item", {})}
        failed, data = await self.crud(action="create", items=[item], **arguments)
        assert not failed, data
        return data["items"][0]

    async def reflect(self, **arguments: Any) -> tuple[bool, dict]:
        return await self.call("memory_reflect", MemoryReflectResult, arguments)

    async def log(self, session_id: str, *turns: dict | str) -> dict:
        """Log turns (a plain string is a user turn); asserts success."""
        items = [{"role": "user", "content": t} if isinstance(t, str) else t for t in turns]
        failed, data = await self.reflect(action="log", session_id=session_id, turns=items)
        assert not failed, data
        return data

    def as_(self, ident: dict | None) -> Agent:
        return Agent(self.client, ident)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "data")


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def client(settings: Settings, mode: str) -> AsyncIterator[Client]:
    async with Client(create_server(settings), mode=mode) as connected:
        yield connected


@pytest.fixture
def agent(client: Client) -> Agent:
    """The launch identity (alice, sys1, team red) with no metadata."""
    return Agent(client)


def audit_rows(settings: Settings) -> list[sqlite3.Row]:
    conn = sqlite3.connect(settings.sqlite_file)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM audit ORDER BY seq").fetchall()
    finally:
        conn.close()
