"""A large session log through a real MCP client session: its secrets are redacted in what is
stored, and another caller's reads are served while it is redacted (redaction of a large input
runs off the event loop: core.memories.secrets.redactor)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from agent_memory.tools.server import create_server
from tests.conftest import Agent, make_settings

pytestmark = pytest.mark.anyio

# Fake, format-valid values (never real ones).
GITHUB = "ghp_" + "Zq4T8mW2xL9pR3vB7nK1cY6hJ5dF0sG2aE8u"
PASSWORD = "Harbor#Mist9"
AWS = "AKIA" + "QWERTYUIOPASDFG2"
LINE = ("2025-10-01T12:00:00Z INFO request_id=4bf92f3577b34da6 path=/api/v1/orders status=200 took=12ms "
        "user: the deploy finished, the cache was warm and the queue drained\n")


def turn(n: int, size: int = 990_000) -> str:
    """About 1 MB of log and chat, a secret at its start, middle and end."""
    filler = LINE * (size // len(LINE) // 2)
    return (f"token {GITHUB} for run {n}\n{filler}redis-cli -a {PASSWORD} ping\n{filler}"
            f"export AWS_ACCESS_KEY_ID={AWS}\n")


async def test_a_3_mb_log_is_stored_redacted_while_another_callers_reads_are_served(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "d", session_log_max_chars=1_000_000, compaction_threshold_chars=0)
    turns = [{"role": "tool", "name": "shell", "content": turn(n)} for n in range(3)]
    assert sum(len(t["content"]) for t in turns) > 2_900_000
    async with Client(create_server(settings), mode="legacy") as client:
        agent = Agent(client)
        await agent.create("Restart the queue only after draining it")
        done: list[str] = []
        started = anyio.Event()

        async def log() -> None:
            started.set()
            logged = await agent.log("big", *turns)
            assert logged["redacted"] == 9 and logged["truncated"] == []
            done.append("log")

        async def reads() -> None:
            await started.wait()
            await anyio.sleep(0)  # the log's request is on its way
            for _ in range(3):
                failed, data = await agent.crud(action="list", limit=5)
                assert not failed and data["items"]
                done.append("read")

        async with anyio.create_task_group() as group:
            group.start_soon(log)
            group.start_soon(reads)
        assert done == ["read", "read", "read", "log"]  # the reads did not wait for the log
        failed, listed = await agent.crud(action="list", filters={"session_id": "big"}, limit=10)
        assert not failed and len(listed["items"]) == 3
        stored = "".join(item["content"] for item in listed["items"])
    assert len(stored) > 2_900_000
    assert stored.count("[REDACTED:github_token]") == 3 and stored.count("[REDACTED:password]") == 3
    assert [v for v in (GITHUB, PASSWORD, AWS) if v in stored] == []
    data = b"".join(p.read_bytes() for p in Path(settings.sqlite_file).parent.glob("memory.db*"))
    assert [v for v in (GITHUB, PASSWORD, AWS) if v.encode() in data] == []
