"""AutoGen adds with a `key` in their metadata: a stable name, so adds of one key, even at once,
leave one entry holding the last value (the server's unique index decides)."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest
from autogen_core.memory import MemoryContent, MemoryMimeType

from agent_memory.integrations.autogen import AgentMemory
from tests.integrations.conftest import ALICE, RecordingLink

pytestmark = pytest.mark.anyio


async def test_concurrent_adds_of_one_key_leave_one_entry_holding_one_of_the_values(
        in_process: Callable[[dict], RecordingLink]) -> None:
    link = in_process(ALICE)
    memory = AgentMemory(link)
    values = [f"The user's timezone is UTC+{n}." for n in range(5)]
    async with anyio.create_task_group() as tg:
        for value in values:
            tg.start_soon(memory.add, MemoryContent(content=value, mime_type=MemoryMimeType.TEXT,
                                                    metadata={"key": "timezone", "topic": "prefs"}))
    listed = (await link.call("memory_crud", {"action": "list", "filters": {"key": "timezone"}}))["items"]
    assert len(listed) == 1 and listed[0]["content"] in values and listed[0]["version"] == 5
    assert "topic=prefs" in listed[0]["tags"] and not any(t.startswith("key=") for t in listed[0]["tags"])
    await memory.clear()
    assert (await link.call("memory_crud", {"action": "list"}))["items"] == []
