"""The server's instructions and prompts (issue 24, item 6) over a real MCP client session, in both
protocol generations: what a host shows as slash commands, and messages that make the model call
the right tool with the right arguments."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from agent_memory.core.recall.context import OPEN
from agent_memory.tools.instructions import INSTRUCTIONS, instructions
from agent_memory.tools.server import create_server
from tests.conftest import IDENTITY_KEY, Agent, identity, make_settings

pytestmark = pytest.mark.anyio

CALL = re.compile(r"Call (memory_\w+) with arguments (\{.*?\})(?=[.:]? |\.?$)", re.MULTILINE)


def calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    return [(tool, json.loads(arguments)) for tool, arguments in CALL.findall(text)]


async def get(client: Client, name: str, arguments: dict[str, str] | None = None, ident: dict | None = None) -> str:
    meta = {IDENTITY_KEY: ident} if ident is not None else None
    result = await client.get_prompt(name, arguments, meta=meta)
    assert len(result.messages) == 1 and result.messages[0].role == "user"
    return result.messages[0].content.text


async def test_instructions_say_when_to_recall_write_and_reflect(client: Client) -> None:
    text = instructions(hooks_capture=False)
    assert client.instructions == text and text.startswith(INSTRUCTIONS)
    for phrase in ("memory_retrieve", "start of a task", "memory_crud", "create", "Never store secrets",
                   "memory_reflect", "end of a session", "not instructions"):
        assert phrase in text
    assert len(text) / 4 < 250  # tokens, estimated at 4 characters
    tools_doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "tools.md").read_text().split())
    assert f"{len(text)} characters, about **{round(len(text) / 4)} tokens**" in tools_doc


async def test_where_hooks_capture_the_model_is_not_asked_to_log_or_reflect(tmp_path: Path) -> None:
    """`setup` writes hooks_capture beside the hooks it installs: one capture, by the hooks."""
    async with Client(create_server(make_settings(tmp_path / "d", hooks_capture=True)), mode="legacy") as client:
        text = client.instructions
        assert text is not None and text.startswith(INSTRUCTIONS)
        assert "hooks log and reflect every session" in text
        assert "end of a session" not in text and "action log" not in text
        assert {p.name for p in (await client.list_prompts()).prompts} == {"recall", "remember"}
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("summarize_session", {"session_id": "s-1"})
        assert refused.value.error.data["code"] == "INVALID_PARAMS" and "hooks" in refused.value.error.message


async def test_prompts_are_listed_with_their_arguments(client: Client) -> None:
    listed = {p.name: p for p in (await client.list_prompts()).prompts}
    assert set(listed) == {"recall", "remember", "summarize_session"}
    arguments = {name: [(a.name, a.required) for a in p.arguments or []] for name, p in listed.items()}
    assert arguments == {"recall": [("topic", True)], "remember": [("what", True)],
                         "summarize_session": [("session_id", False)]}
    assert all(p.description for p in listed.values())


async def test_recall_asks_for_memory_retrieve_with_the_topic(client: Client) -> None:
    agent = Agent(client)
    await agent.create("The deploy key is kept in the team vault under ops/keys.")
    topic = 'where the "deploy" key is kept'
    text = await get(client, "recall", {"topic": topic})
    assert topic in text and "not instructions" in text
    [(tool, arguments)] = calls(text)
    assert (tool, arguments) == ("memory_retrieve", {"query": topic})
    result = await client.call_tool(tool, {**arguments, "mode": "keyword"})  # the call it asks for works
    assert not result.is_error and result.structured_content["context"].startswith(OPEN)


async def test_remember_asks_for_memory_crud_create_with_the_text(client: Client) -> None:
    what = "We decided to ship on Tuesdays.\nNot on Fridays."
    text = await get(client, "remember", {"what": what})
    [(tool, arguments)] = calls(text)
    assert (tool, arguments) == ("memory_crud", {"action": "create", "items": [{"content": what}]})
    assert "secret" in text
    result = await client.call_tool(tool, arguments)
    assert not result.is_error and result.structured_content["items"][0]["content"] == what


async def test_summarize_session_asks_to_log_then_reflect(client: Client) -> None:
    text = await get(client, "summarize_session", {"session_id": "s-42"})
    assert [(tool, arguments["action"], arguments["session_id"]) for tool, arguments in calls(text)] == [
        ("memory_reflect", "log", "s-42"), ("memory_reflect", "reflect", "s-42")]
    text = await get(client, "summarize_session")  # no id: one is proposed, valid for the tool
    found = calls(text)
    proposed = found[0][1]["session_id"]
    assert re.fullmatch(r"session-\d{8}T\d{6}Z", proposed) and found[1][1]["session_id"] == proposed
    assert (await get(client, "summarize_session", {"session_id": ""})).count(proposed[:9]) >= 1  # empty = absent
    agent = Agent(client)
    await agent.log(proposed, "I prefer tabs over spaces.")
    failed, data = await agent.reflect(action="reflect", session_id=proposed)
    assert not failed, data


@pytest.mark.parametrize(("name", "arguments", "said"), [
    ("forget_everything", {}, "unknown prompt"),
    ("recall", {}, "needs the argument topic"),
    ("recall", {"topic": "   "}, "needs the argument topic"),
    ("remember", None, "needs the argument what"),
    ("recall", {"topic": "x", "scope": "global"}, "takes no argument scope"),
    ("recall", {"topic": "x" * 4001}, "longer than 4000"),
    ("summarize_session", {"session_id": "bad id!"}, "session_id must be"),
])
async def test_a_bad_prompt_request_is_a_clean_error(client: Client, name: str, arguments: dict | None,
                                                     said: str) -> None:
    with pytest.raises(MCPError) as raised:
        await client.get_prompt(name, arguments)
    assert raised.value.error.code == -32602 and said in raised.value.error.message
    assert "Traceback" not in raised.value.error.message
    assert raised.value.error.data["code"] == "INVALID_PARAMS"
    assert (await client.list_prompts()).prompts  # the session goes on


async def test_prompts_follow_the_callers_skills(client: Client) -> None:
    reader = identity("dana", "sys1", "red", skills=["memory_retrieve"])
    listed = await client.list_prompts(meta={IDENTITY_KEY: reader}, cache_mode="bypass")
    assert [p.name for p in listed.prompts] == ["recall"]
    assert "memory_retrieve" in await get(client, "recall", {"topic": "x"}, reader)
    with pytest.raises(MCPError) as raised:
        await get(client, "remember", {"what": "x"}, reader)
    assert raised.value.error.data["code"] == "FORBIDDEN" and "memory_crud" in raised.value.error.message
    with pytest.raises(MCPError) as raised:
        await client.list_prompts(meta={IDENTITY_KEY: {"agent_id": "bad id", "system_type": "sys1", "team": "red"}},
                                  cache_mode="bypass")
    assert raised.value.error.code == -32602
