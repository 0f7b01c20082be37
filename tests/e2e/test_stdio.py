"""End to end: `agent-memory serve` as a subprocess, driven over stdio."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import agent_memory_command, server_env

pytestmark = pytest.mark.anyio

ALL_TOOLS = ["memory_crud", "memory_retrieve", "memory_reflect"]

IDENTITY = {"agent_id": "stdio-agent", "system_type": "sys3", "team": "ops"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_stdio_client_drives_memory_crud(tmp_path: Path, mode: str) -> None:
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=server_env(tmp_path))
    async with Client(params, mode=mode, read_timeout_seconds=30) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ALL_TOOLS
        created = await client.call_tool("memory_crud", {"action": "create", "items": [{"content": "over stdio"}]})
        assert not created.is_error
        entry = created.structured_content["items"][0]
        assert entry["owner_agent_id"] == "launcher"
        listed = await client.call_tool("memory_crud", {"action": "list"})
        assert [e["id"] for e in listed.structured_content["items"]] == [entry["id"]]
        denied = await client.call_tool("memory_crud", {"action": "list", "scope": "global", "namespace": "global"})
        assert denied.is_error and denied.structured_content["errors"][0]["code"] == "FORBIDDEN"
        logged = await client.call_tool("memory_reflect", {"action": "log", "session_id": "s1", "turns": [
            {"role": "user", "content": "Never page the on-call engineer for warnings."}]})
        assert not logged.is_error and logged.structured_content["turns_processed"] == 1
        reflected = await client.call_tool("memory_reflect", {"action": "reflect", "session_id": "s1"})
        assert reflected.structured_content["engine"] == "extractive"
        assert [i["layer"] for i in reflected.structured_content["items"]] == ["meta"]
        # The model and the vector index load and answer with no network (CI runs this file under
        # `unshare -n`, so any download or telemetry call would fail here).
        with anyio.fail_after(60):
            while True:
                found = await client.call_tool("memory_retrieve", {"query": "who gets paged?", "mode": "semantic",
                                                                                     "min_score": 0})
                if found.structured_content["degraded"] is None and found.structured_content["items"]:
                    break  # loaded, and the entry is indexed
                await anyio.sleep(0.2)
        assert found.structured_content["items"][0]["content"] == "Never page the on-call engineer for warnings."
    assert (tmp_path / "memory.db").exists()


def _rpc(msg_id: int | None, method: str, params: dict) -> str:
    message: dict = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        message["id"] = msg_id
    return json.dumps(message) + "\n"


def test_stdout_carries_nothing_but_protocol_messages(tmp_path: Path) -> None:
    meta = {"agent-memory/identity": IDENTITY}
    requests = "".join([
        _rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "raw", "version": "1"}, "_meta": meta}),
        _rpc(None, "notifications/initialized", {}),
        _rpc(2, "tools/list", {}),
        _rpc(3, "tools/call", {"name": "memory_crud",
                               "arguments": {"action": "create", "items": [{"content": "PRIVATE-TEXT"}]}}),
        _rpc(4, "tools/call", {"name": "memory_crud", "arguments": {"action": "list", "limit": "many"}}),
        _rpc(6, "tools/call", {"name": "no_such_tool", "arguments": {}}),
    ])
    # Requests run concurrently: the list goes out once the create has been answered.
    later = _rpc(5, "tools/call", {"name": "memory_crud", "arguments": {"action": "list"}})
    proc = subprocess.Popen([agent_memory_command(), "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=server_env(tmp_path))
    assert proc.stdin and proc.stdout
    proc.stdin.write(requests)
    proc.stdin.flush()
    lines = _read_responses(proc.stdout.fileno(), expected=5, timeout=60)
    proc.stdin.write(later)
    proc.stdin.flush()
    lines += _read_responses(proc.stdout.fileno(), expected=1, timeout=60)
    rest, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    lines += rest.splitlines()
    messages = [json.loads(line) for line in lines]
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    by_id = {m["id"]: m for m in messages if "id" in m}
    assert set(by_id) == {1, 2, 3, 4, 5, 6}
    assert by_id[3]["result"]["structuredContent"]["items"][0]["owner_agent_id"] == "stdio-agent"
    assert by_id[4]["result"]["isError"] is True
    assert by_id[5]["result"]["structuredContent"]["items"][0]["content"] == "PRIVATE-TEXT"
    log_lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    invocations = [e for e in log_lines if e["event"] == "tool_invocation" and e["tool"] == "memory_crud"]
    assert sorted(e["outcome"] for e in invocations) == ["INVALID_PARAMS", "ok", "ok"]
    assert all(e["agent_id"] == "stdio-agent" for e in invocations)
    assert "PRIVATE-TEXT" not in stderr


def _read_responses(fd: int, expected: int, timeout: float) -> list[str]:
    """Read stdout until `expected` responses (messages with an id) arrived; raw reads, so no
    line can hide in a buffer while select() waits."""
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    data = b""

    def answered() -> int:
        complete = data.decode(errors="replace").split("\n")[:-1]
        return sum(1 for line in complete if "id" in json.loads(line))

    while answered() < expected:
        remaining = deadline - time.monotonic()
        assert remaining > 0 and selector.select(remaining), f"no answer in time; got {data!r}"
        chunk = os.read(fd, 65536)
        assert chunk, f"server closed stdout; got {data!r}"
        data += chunk
    return data.decode().splitlines()


async def test_a_retrieve_sent_right_after_spawn_is_answered_by_meaning(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        created = await client.call_tool("memory_crud", {"action": "create", "items": [
            {"content": "The quarterly budget review is on the first Tuesday of each quarter."}]})
        entry = created.structured_content["items"][0]["id"]
        with anyio.fail_after(60):  # indexed before this server stops
            while True:
                found = await client.call_tool("memory_retrieve", {"query": "quarterly budget review",
                                                                   "mode": "semantic", "min_score": 0})
                if found.structured_content["degraded"] is None and found.structured_content["items"]:
                    break
                await anyio.sleep(0.2)
    # A host that starts the server and asks at once: the first call waits for the model instead
    # of answering keyword-only, and finds the memory by meaning (no word in common).
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        started = time.monotonic()
        found = await client.call_tool("memory_retrieve", {"query": "when do we look at spending plans?",
                                                           "mode": "semantic", "min_score": 0})
        data = found.structured_content
        assert not found.is_error and data["degraded"] is None, data
        assert [i["id"] for i in data["items"]][:1] == [entry]
        assert time.monotonic() - started < 30
