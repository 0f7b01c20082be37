"""A repair of the vector index that cannot write to SQLite (a busy database here; a full disk
does the same) is logged when it happens, said in `degraded` and `stats`, gives up the vector
lock, is retried with backoff, and heals without a restart once SQLite accepts writes again."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import INDEXED, agent_memory_command, retrieve, server_env

pytestmark = pytest.mark.anyio

TEXT = "Glaciers carve valleys over thousands of years."
QUESTION = "how were the valleys shaped by ice?"


async def _semantic(client: Client, entry_id: str, timeout: float) -> dict:
    with anyio.fail_after(timeout):
        while True:
            found = await retrieve(client, QUESTION, limit=5)
            if found["degraded"] is None and [i["id"] for i in found["items"]][:1] == [entry_id]:
                return found
            await anyio.sleep(0.2)


def _log_lines(data: Path) -> list[dict]:
    path = data / "logs" / "agent-memory.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _stats(env: dict[str, str]) -> dict:
    return json.loads(subprocess.run([agent_memory_command(), "stats"], env=env, capture_output=True, text=True,
                                     timeout=60, check=True).stdout)


def _lock_is_free(lock: Path) -> bool:
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # releases it at once if taken
    return True


async def test_a_repair_blocked_by_a_busy_database_is_reported_and_heals_without_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = server_env(data, MEMORY_RATE_LIMIT_PER_SECOND="0", MEMORY_SQLITE_BUSY_TIMEOUT_MS="100", **INDEXED)
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        made = await client.call_tool("memory_crud", {"action": "create", "items": [{"content": TEXT}]})
        entry_id = made.structured_content["items"][0]["id"]
        await _semantic(client, entry_id, timeout=60)
    for path in (data / "chroma").rglob("*"):
        if path.is_file():
            path.write_bytes(b"")  # damaged: the next start must rebuild it from SQLite
    (data / "chroma.broken-1").mkdir()  # left by an earlier repair: cleaned up after this one

    holder = sqlite3.connect(data / "memory.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # no other connection can write: the repair's requeue fails
    try:
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            with anyio.fail_after(60):
                while "storage_busy" not in ((found := await retrieve(client, QUESTION, limit=5))["degraded"] or ""):
                    await anyio.sleep(0.2)
            # Keyword search answers meanwhile, and `degraded` says why semantic search does not.
            assert [i["id"] for i in found["items"]] == [entry_id]
            # Logged at ERROR when it happened (not at shutdown), with a reason and no content.
            failures = [line for line in _log_lines(data) if line["event"] == "vector_sync_failed"]
            assert failures and failures[0]["level"] == "error", failures
            assert failures[0]["step"] == "repair" and failures[0]["reason"] == "storage_busy"
            assert "Glaciers" not in (data / "logs" / "agent-memory.log").read_text()
            # While it cannot repair, it gives the vector lock up (between its retries).
            with anyio.fail_after(30):
                while not _lock_is_free(data / "chroma.lock"):
                    await anyio.sleep(0.05)
            stats = _stats(env)
            states = stats["vector_task"]["processes"]
            assert [s["reason"] for s in states] == ["storage_busy"], stats["vector_task"]
            assert states[0]["step"] == "repair" and states[0]["failures"] >= 1
            # A write meanwhile waits busy_timeout, then says why it failed (no internal text).
            refused = await client.call_tool("memory_crud", {"action": "create", "items": [{"content": "later"}]})
            error = refused.structured_content["errors"][0]
            assert refused.is_error and error["code"] == "INTERNAL", error
            assert error["details"]["reason"] == "storage_busy" and "busy" in error["message"], error
            holder.rollback()  # the database accepts writes again: it heals, no restart
            started = time.monotonic()
            await _semantic(client, entry_id, timeout=45)
            healed_after = time.monotonic() - started
            states = _stats(env)["vector_task"]
            assert [s["state"] for s in states["processes"]] == ["ready"], states
            assert states["set_aside"] == [], states  # the rebuild caught up: nothing kept aside
        print(f"healed {healed_after:.1f} s after the database was released")
    finally:
        holder.close()
    assert not list(data.glob("chroma.broken-*"))


async def test_applying_changes_against_a_busy_database_is_retried_and_never_discards_the_index(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = server_env(data, MEMORY_RATE_LIMIT_PER_SECOND="0", MEMORY_SQLITE_BUSY_TIMEOUT_MS="100")
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env)
    first = StdioServerParameters(command=agent_memory_command(), args=["serve"], env={**env, **INDEXED})
    async with Client(first, mode="legacy", read_timeout_seconds=60) as client:  # indexed before it stops
        made = await client.call_tool("memory_crud", {"action": "create", "items": [{"content": TEXT}]})
        entry_id = made.structured_content["items"][0]["id"]
        await _semantic(client, entry_id, timeout=60)
    # A process without vectors leaves a change in the outbox for the next owner.
    offline = StdioServerParameters(command=agent_memory_command(), args=["serve"],
                                    env={**env, "MEMORY_VECTOR_BACKEND": "none"})
    async with Client(offline, mode="legacy", read_timeout_seconds=60) as client:
        made = await client.call_tool("memory_crud", {"action": "create", "items": [
            {"content": "Fog horns sound every thirty seconds in poor visibility."}]})
        late_id = made.structured_content["items"][0]["id"]

    holder = sqlite3.connect(data / "memory.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # the owner can index it, but not record that in SQLite
    try:
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            with anyio.fail_after(60):
                while not [line for line in _log_lines(data)
                           if line["event"] == "vector_sync_failed" and line.get("attempt", 0) >= 4]:
                    await anyio.sleep(0.2)
            failures = [line for line in _log_lines(data) if line["event"] == "vector_sync_failed"]
            assert failures[0]["level"] == "error", failures
            assert {(f["step"], f["reason"]) for f in failures} == {("apply", "storage_busy")}, failures
            # A busy database is no fault of the index: it is kept, and keeps answering.
            assert not [line for line in _log_lines(data) if line["event"] == "vector_index_rebuilding"]
            await _semantic(client, entry_id, timeout=5)
            holder.rollback()
            with anyio.fail_after(45):
                while True:
                    found = await retrieve(client, "what warns ships when it is misty?", limit=5)
                    if found["degraded"] is None and [i["id"] for i in found["items"]][:1] == [late_id]:
                        break
                    await anyio.sleep(0.2)
            with anyio.fail_after(30):  # and records it in SQLite at its next retry
                while _stats(env)["vector_outbox_backlog"]:
                    await anyio.sleep(0.5)
    finally:
        holder.close()
    assert not [line for line in _log_lines(data) if line["event"] == "vector_index_rebuilding"]
