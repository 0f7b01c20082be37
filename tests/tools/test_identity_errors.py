"""An invalid identity is a clear error on tools/list (a JSON-RPC error) and on every tool call
(FORBIDDEN): it says which field is wrong, the accepted values, and where to fix it."""

from __future__ import annotations

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from agent_memory.config import Settings
from agent_memory.core.model.models import Skill, SystemType
from agent_memory.tools.server import create_server
from tests.conftest import IDENTITY_KEY, Agent
from tests.tools.test_identity import legacy_session

pytestmark = pytest.mark.anyio

SYSTEM_TYPES = ", ".join(s.value for s in SystemType)
SKILLS = ", ".join(s.value for s in Skill)

# (identity, field, text the message must hold besides the field: the accepted values or the fix)
INVALID = [
    ({"agent_id": "a", "system_type": "3", "team": "red"}, "system_type", [SYSTEM_TYPES, "got '3'", "sys3"]),
    ({"agent_id": "a", "system_type": 4, "team": "red"}, "system_type", [SYSTEM_TYPES, "a number", "sys4"]),
    ({"agent_id": "a", "system_type": "root", "team": "red"}, "system_type", [SYSTEM_TYPES, "got 'root'"]),
    ({"agent_id": "a", "system_type": "sys1"}, "team", ["team is required", '"team": "<team>"']),
    ({"agent_id": "a", "system_type": "sys1", "team": "red", "skills": ["memory_everything"]}, "skills",
     [SKILLS, "got 'memory_everything'"]),
    ({"agent_id": "a", "system_type": "sys1", "team": "red", "skills": "memory_crud,memory_all"}, "skills", [SKILLS]),
    ({"agent_id": "a b", "system_type": "sys1", "team": "red"}, "agent_id", ["[A-Za-z0-9._-]", "got 'a b'"]),
    ({"agent_id": "a", "system_type": "sys1", "team": "red", "role": "admin"}, "role",
     ["agent_id, system_type, team, skills"]),
    ("alice", "identity", ['"system_type": "sys1".."sys5"']),
]


def _check_message(message: str, field: str, expected: list[str], source: str) -> None:
    assert field in message, message
    for text in expected:
        assert text in message, (text, message)
    assert f"{IDENTITY_KEY} object in {source}" in message, message
    assert "Choosing a system type and team" in message, message


@pytest.mark.parametrize(("ident", "field", "expected"), INVALID)
async def test_invalid_request_identity_fails_tools_list_with_a_json_rpc_error(
        client: Client, ident: object, field: str, expected: list[str]) -> None:
    with pytest.raises(MCPError) as raised:
        await client.list_tools(meta={IDENTITY_KEY: ident})
    error = raised.value.error
    assert error.code == -32602
    _check_message(error.message, field, expected, "this request's _meta")
    assert error.data["code"] == "FORBIDDEN" and error.data["message"] == error.message
    assert error.data["details"]["field"] == field and error.data["details"]["source"] == "request_meta"


@pytest.mark.parametrize(("ident", "field", "expected"), INVALID)
async def test_invalid_request_identity_fails_every_tool_call_alike(
        agent: Agent, ident: object, field: str, expected: list[str]) -> None:
    for tool, arguments in (("memory_crud", {"action": "list"}), ("memory_retrieve", {"query": "x"}),
                            ("memory_reflect", {"action": "compact", "session_id": "s"})):
        result = await agent.client.call_tool(tool, arguments, meta={IDENTITY_KEY: ident})
        assert result.is_error
        (error,) = result.structured_content["errors"]
        assert error["code"] == "FORBIDDEN" and error["details"]["field"] == field
        _check_message(error["message"], field, expected, "this request's _meta")


async def test_system_type_error_lists_the_allowed_values_in_details(client: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await client.list_tools(meta={IDENTITY_KEY: {"agent_id": "a", "system_type": "SYS3", "team": "red"}})
    details = raised.value.error.data["details"]
    assert details["allowed"] == [s.value for s in SystemType]
    assert "did you mean 'sys3'?" in raised.value.error.message


async def test_invalid_initialize_identity_fails_tools_list_and_calls_of_the_session(settings: Settings) -> None:
    meta = {IDENTITY_KEY: {"agent_id": "a", "system_type": "3", "team": "red"}}
    async with legacy_session(settings, meta) as session:
        with pytest.raises(MCPError) as raised:
            await session.list_tools()
        _check_message(raised.value.error.message, "system_type", [SYSTEM_TYPES, "sys3"],
                       "the initialize request's _meta")
        assert raised.value.error.data["details"]["source"] == "initialize_meta"
        result = await session.call_tool("memory_crud", {"action": "list"})
        assert result.is_error
        assert result.structured_content["errors"][0]["message"] == raised.value.error.message


async def test_a_valid_request_identity_overrides_an_invalid_initialize_identity(settings: Settings) -> None:
    meta = {IDENTITY_KEY: {"agent_id": "a", "system_type": "3", "team": "red"}}
    valid = {IDENTITY_KEY: {"agent_id": "a", "system_type": "sys3", "team": "red"}}
    async with legacy_session(settings, meta) as session:
        # sent raw: the SDK client re-lists tools (without this _meta) to validate a successful result
        result = await session.send_request(
            types.CallToolRequest(params=types.CallToolRequestParams(name="memory_crud", arguments={"action": "list"},
                                                                     _meta=valid)),
            types.CallToolResult)
        assert not result.is_error and result.structured_content["errors"] == []


async def test_valid_identities_still_list_their_granted_tools(settings: Settings) -> None:
    async with Client(create_server(settings)) as client:
        listed = await client.list_tools(meta={IDENTITY_KEY: {"agent_id": "a", "system_type": "sys2", "team": "red",
                                                               "skills": ["memory_retrieve"]}})
        assert [t.name for t in listed.tools] == ["memory_retrieve"]
