"""AutoGen's Memory protocol on agent-memory: the real autogen-core, real servers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from autogen_core import Image
from autogen_core.memory import Memory, MemoryContent, MemoryMimeType, MemoryQueryResult, UpdateContextResult
from autogen_core.model_context import BufferedChatCompletionContext
from autogen_core.models import SystemMessage, UserMessage

from agent_memory.integrations.autogen import AgentMemory
from agent_memory.integrations.mcp_link import MemoryLink, MemoryPermissionError, MemoryToolError
from tests.e2e.servers import http_server, token
from tests.integrations.conftest import ALICE, BOB, CAROL, wait_semantic

pytestmark = pytest.mark.anyio


def text(content: str, **metadata: object) -> MemoryContent:
    return MemoryContent(content=content, mime_type=MemoryMimeType.TEXT, metadata=metadata or None)


async def test_agent_memory_is_an_autogen_memory_that_recalls_by_meaning_over_stdio(
        stdio_link: Callable[[dict], MemoryLink]) -> None:
    memory = AgentMemory(stdio_link(ALICE))
    assert isinstance(memory, Memory)
    await memory.add(text("The user prefers answers in metric units.", priority="high", tags=["prefs"]))
    await memory.add(text("The staging database is called bluebird."))
    await memory.add(MemoryContent(content="# Runbook\nRestart the **queue** first.",
                                   mime_type=MemoryMimeType.MARKDOWN))
    await memory.add(MemoryContent(content={"city": "Lyon", "country": "France"}, mime_type=MemoryMimeType.JSON,
                                   metadata={"layer": "working", "topic": "travel"}))
    await wait_semantic(memory.link)

    result = await memory.query("Which units does the user want distances in?")
    assert isinstance(result, MemoryQueryResult)
    best = result.results[0]
    assert best.content == "The user prefers answers in metric units."
    assert best.mime_type == "text/plain"
    assert best.metadata is not None and best.metadata["priority"] == "high" and "prefs" in best.metadata["tags"]
    scores = [r.metadata["score"] for r in result.results if r.metadata]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0

    markdown = (await memory.query("how do I restart the queue?")).results[0]
    assert markdown.mime_type == "text/markdown" and markdown.content.startswith("# Runbook")
    city = (await memory.query("Which city in France?", tags=["topic=travel"])).results
    assert [(c.content, c.mime_type, c.metadata["layer"]) for c in city] == [
        ({"city": "Lyon", "country": "France"}, "application/json", "working")]
    await memory.close()


async def test_update_context_adds_the_retrieved_context_block_as_one_system_message(
        stdio_link: Callable[[dict], MemoryLink]) -> None:
    memory = AgentMemory(stdio_link(ALICE))
    await memory.add(text("The user's cat is named Miso."))
    await wait_semantic(memory.link)
    context = BufferedChatCompletionContext(buffer_size=10)
    assert (await memory.update_context(context)).memories.results == []  # nothing to query by yet

    await context.add_message(UserMessage(content="What is my cat called?", source="user"))
    updated = await memory.update_context(context)
    assert isinstance(updated, UpdateContextResult)
    assert [r.content for r in updated.memories.results] == ["The user's cat is named Miso."]
    messages = await context.get_messages()
    assert len(messages) == 2 and isinstance(messages[1], SystemMessage)
    injected = messages[1].content
    assert injected.startswith("\nRelevant memory content:\n<recalled-memory note=")
    assert injected.endswith(" by alice in alice] The user's cat is named Miso.\n</recalled-memory>")
    await memory.close()


async def test_update_context_leaves_the_context_alone_when_nothing_is_relevant(
        in_process: Callable[[dict], MemoryLink]) -> None:
    memory = AgentMemory(in_process(ALICE))
    await memory.add(text("The deploy window is on Tuesdays."))
    context = BufferedChatCompletionContext(buffer_size=10)
    await context.add_message(UserMessage(content="zebra xylophone", source="user"))
    assert (await memory.update_context(context)).memories.results == []
    assert len(await context.get_messages()) == 1


async def test_clear_deletes_only_what_this_identity_owns_in_its_namespace(
        in_process: Callable[[dict], MemoryLink]) -> None:
    alice, bob, carol = in_process(ALICE), in_process(BOB), in_process(CAROL)
    bob_team = AgentMemory(bob, scope="team", namespace="red", layer="long_term")
    await bob_team.add(text("Team red deploys on Tuesdays."))
    await AgentMemory(carol, scope="team", namespace="red", layer="long_term").add(text("Team red pages at 9."))
    await AgentMemory(alice, namespace="alice/elsewhere").add(text("Alice keeps this elsewhere."))
    mine = AgentMemory(alice)
    for i in range(13):  # more than one delete request (10 items each)
        await mine.add(text(f"alice note {i}"))
    await bob_team.clear()  # bob may delete carol's team entries, but clear takes only his own

    await mine.clear()
    listed = await alice.call("memory_crud", {"action": "list"})
    assert listed["items"] == []
    elsewhere = await alice.call("memory_crud", {"action": "list", "namespace": "alice/elsewhere"})
    assert [e["content"] for e in elsewhere["items"]] == ["Alice keeps this elsewhere."]
    team = await alice.call("memory_crud", {"action": "list", "scope": "team", "namespace": "red"})
    assert [e["content"] for e in team["items"]] == ["Team red pages at 9."]
    # alice may read team memory but not write it: clearing deletes nothing of bob's
    await AgentMemory(alice, scope="team", namespace="red", layer="long_term").clear()
    assert len((await alice.call("memory_crud", {"action": "list", "scope": "team", "namespace": "red"}))["items"]) == 1


async def test_refusals_raise_with_the_spec_code(in_process: Callable[[dict], MemoryLink]) -> None:
    alice = in_process(ALICE)
    with pytest.raises(MemoryPermissionError) as denied:
        await AgentMemory(alice, scope="team", namespace="red", layer="long_term").add(text("sys1 cannot write"))
    assert denied.value.code == "FORBIDDEN" and isinstance(denied.value, PermissionError)
    with pytest.raises(MemoryToolError) as invalid:
        await AgentMemory(alice).add(text("bad priority", priority="urgent"))
    assert invalid.value.code == "INVALID_PARAMS"
    with pytest.raises(ValueError, match="stores text"):
        await AgentMemory(alice).add(MemoryContent(content=Image.from_base64(_PNG), mime_type=MemoryMimeType.IMAGE))
    with pytest.raises(ValueError, match="namespace and a layer"):
        AgentMemory(alice, scope="team")


async def test_close_ends_the_session_and_the_link_refuses_more_calls(
        in_process: Callable[[dict], MemoryLink]) -> None:
    memory = AgentMemory(in_process(ALICE))
    await memory.add(text("before close"))
    await memory.close()
    await memory.close()  # twice is fine
    with pytest.raises(RuntimeError, match="closed"):
        await memory.query("before close")


async def test_agent_memory_over_http_speaks_as_the_bearer_token(tmp_path: Path) -> None:
    with http_server(tmp_path / "data") as url:
        memory = AgentMemory(MemoryLink.http(url, token("planner", "sys3", "platform")),
                             scope="team", namespace="platform", layer="long_term")
        try:
            await memory.add(text("Platform releases are frozen in December.", tags=["policy"]))
            found = (await memory.query("release freeze", mode="keyword", min_score=0)).results
            assert [(r.content, r.metadata["owner_agent_id"], r.metadata["scope"]) for r in found] == [
                ("Platform releases are frozen in December.", "planner", "team")]
            await memory.clear()
            assert (await memory.query("release freeze", mode="keyword", min_score=0)).results == []
        finally:
            await memory.close()


# a 1x1 PNG
_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
