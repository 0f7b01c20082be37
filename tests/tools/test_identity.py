"""Caller identity: launch configuration, `initialize` `_meta` (2025-11-25) and per-request
`_meta` (2026-07-28); skill grants filter tools/list and refuse calls."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.client._memory import InMemoryTransport
from mcp.client.session import ClientSession

from agent_memory.config import Settings
from agent_memory.tools.server import create_server
from tests.conftest import IDENTITY_KEY, Agent, identity, make_settings

pytestmark = pytest.mark.anyio

ALL_TOOLS = ["memory_crud", "memory_retrieve", "memory_reflect"]


@asynccontextmanager
async def legacy_session(settings: Settings, meta: dict | None) -> AsyncIterator[ClientSession]:
    """A 2025-11-25 session whose `initialize` request carries `_meta`."""
    async with InMemoryTransport(create_server(settings)) as (read, write):
        async with ClientSession(read, write) as session:
            result = await session.send_request(
                types.InitializeRequest(
                    params=types.InitializeRequestParams(
                        protocol_version="2025-11-25",
                        capabilities=types.ClientCapabilities(),
                        client_info=types.Implementation(name="identity-test", version="1"),
                        _meta=meta,
                    )
                ),
                types.InitializeResult,
            )
            session.adopt(result)
            await session.send_notification(types.InitializedNotification())
            yield session


async def test_launch_identity_is_used_without_metadata(agent: Agent) -> None:
    entry = await agent.create("mine")
    assert (entry["owner_agent_id"], entry["team"], entry["namespace"]) == ("alice", "red", "alice")


async def test_identity_in_initialize_meta_binds_the_whole_session(settings: Settings) -> None:
    meta = {IDENTITY_KEY: identity("carol", "sys3", "green")}
    async with legacy_session(settings, meta) as session:
        result = await session.call_tool("memory_crud", {"action": "create", "items": [{"content": "hi"}]})
        entry = result.structured_content["items"][0]
        assert (entry["owner_agent_id"], entry["team"]) == ("carol", "green")
        result = await session.call_tool("memory_crud", {"action": "create", "scope": "team", "namespace": "green",
                                                         "layer": "meta", "items": [{"content": "rule"}]})
        assert not result.is_error


async def test_per_request_meta_lets_one_connection_carry_several_agents(agent: Agent) -> None:
    dave = agent.as_(identity("dave", "sys1", "red"))
    erin = agent.as_(identity("erin", "sys1", "red"))
    d = await dave.create("dave's")
    e = await erin.create("erin's")
    assert (d["owner_agent_id"], e["owner_agent_id"]) == ("dave", "erin")


@pytest.mark.parametrize(
    ("ident", "field"),
    [
        ({"agent_id": "bad id!", "system_type": "sys1", "team": "red"}, "agent_id"),
        ({"agent_id": "a" * 129, "system_type": "sys1", "team": "red"}, "agent_id"),
        ({"agent_id": "ok", "system_type": "sys9", "team": "red"}, "system_type"),
        ({"agent_id": "ok", "system_type": "sys1", "team": ""}, "team"),
        ({"agent_id": "ok", "system_type": "sys1"}, "team"),
        ({"agent_id": "ok", "system_type": "sys1", "team": "red", "skills": ["memory_everything"]}, "skills"),
        ({"agent_id": "ok", "system_type": "sys1", "team": "red", "role": "admin"}, "role"),
        ("alice", "identity"),
    ],
)
async def test_invalid_identity_is_forbidden_naming_the_field(agent: Agent, ident: object, field: str) -> None:
    failed, data = await agent.as_(ident).crud(action="list")  # type: ignore[arg-type]
    assert failed
    error = data["errors"][0]
    assert error["code"] == "FORBIDDEN" and error["details"]["field"] == field and field in error["message"]


async def test_invalid_identity_in_initialize_meta_is_refused(settings: Settings) -> None:
    meta = {IDENTITY_KEY: {"agent_id": "x", "system_type": "root", "team": "red"}}
    async with legacy_session(settings, meta) as session:
        result = await session.call_tool("memory_crud", {"action": "list"})
        assert result.is_error and result.structured_content["errors"][0]["details"]["field"] == "system_type"


async def test_tools_list_leaves_out_ungranted_tools(client: Client) -> None:
    granted = await client.list_tools(meta={IDENTITY_KEY: identity("a", skills=["memory_crud"])})
    assert [t.name for t in granted.tools] == ["memory_crud"]
    other = await client.list_tools(meta={IDENTITY_KEY: identity("a", skills=["memory_retrieve"])})
    assert [t.name for t in other.tools] == ["memory_retrieve"]
    reflect = await client.list_tools(meta={IDENTITY_KEY: identity("a", skills=["memory_reflect"])})
    assert [t.name for t in reflect.tools] == ["memory_reflect"]
    none = await client.list_tools(meta={IDENTITY_KEY: identity("a", skills=[])})
    assert none.tools == []


async def test_tools_list_for_a_legacy_session_follows_initialize_identity(settings: Settings) -> None:
    async with legacy_session(settings, {IDENTITY_KEY: identity("a", skills=[])}) as session:
        assert (await session.list_tools()).tools == []
    async with legacy_session(settings, {IDENTITY_KEY: identity("a")}) as session:
        assert [t.name for t in (await session.list_tools()).tools] == ALL_TOOLS


async def test_calling_an_ungranted_tool_is_forbidden(agent: Agent) -> None:
    failed, data = await agent.as_(identity("a", skills=["memory_reflect"])).crud(action="list", namespace="a")
    assert failed and data["errors"][0]["code"] == "FORBIDDEN"
    assert data["errors"][0]["details"]["skill"] == "memory_crud"


async def test_launch_configuration_skills_are_deny_by_default(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, skills="")
    async with Client(create_server(settings)) as client:
        assert (await client.list_tools()).tools == []
        result = await client.call_tool("memory_crud", {"action": "list"})
        assert result.is_error and result.structured_content["errors"][0]["code"] == "FORBIDDEN"
