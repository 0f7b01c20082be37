"""The stdio handshake answered before the SDK is imported (issue 36, item 7): the first line, a
`server/discover` probe (2026-07-28) or an `initialize` (the handshake generations), is answered
within milliseconds, exactly as the SDK answers it, once; the session then goes on as if the SDK
had answered (the identity in initialize's `_meta` holds); anything else is left to the SDK."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import mcp_types.version as sdk_versions
import pytest

from agent_memory.transports import stdio_front
from tests.e2e.servers import agent_memory_command, server_env
from tests.e2e.test_stdio_malformed import Wire

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
        "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}}}
PROBE = {"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover", "params": {"_meta": META}}
IDENTITY = {"agent_id": "bob", "system_type": "sys1", "team": "ops"}


def initialize(version: str, request_id: int = 0) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {"roots": {}},
                       "clientInfo": {"name": "raw", "version": "1"}, "_meta": {"agent-memory/identity": IDENTITY}}}


@contextmanager
def server(tmp_path: Path, *args: str) -> Iterator[tuple[Wire, list[dict]]]:
    """A stdio server; on leaving, its stdin is closed and every message it still wrote is in the list."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    with (tmp_path / "stderr.log").open("wb") as stderr:
        proc = subprocess.Popen([agent_memory_command(), "serve", *args], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=stderr, env=server_env(tmp_path / "data"))
        rest: list[dict] = []
        wire = Wire(proc)
        try:
            yield wire, rest
        finally:
            out, _ = proc.communicate(timeout=30)  # closes stdin: the session ends
            rest += [json.loads(line) for line in (wire.buffer + out).splitlines() if line.strip()]
    assert proc.returncode == 0, (tmp_path / "stderr.log").read_text()


def without_id(message: dict) -> dict:
    return {k: v for k, v in message.items() if k != "id"}


def test_the_discover_probe_is_answered_once_as_the_sdk_answers_it(tmp_path: Path) -> None:
    with server(tmp_path, "--hooks-capture", "true", "--project", "shop") as (wire, rest):
        wire.send(json.dumps(PROBE))
        early = wire.receive(30)
        wire.send(json.dumps({**PROBE, "id": "again"}))  # now the SDK answers
        sdk = wire.receive(30)
        tools = wire.call("tools/list", {"_meta": META})
    assert early is not None and sdk is not None and early["id"] == PROBE["id"] and sdk["id"] == "again"
    assert without_id(early) == without_id(sdk)
    assert "project shop" in early["result"]["instructions"]  # the server's own instructions
    assert {t["name"] for t in tools["result"]["tools"]} == {"memory_crud", "memory_retrieve", "memory_reflect"}
    assert [m for m in rest if m.get("id") == PROBE["id"]] == []  # answered once


@pytest.mark.parametrize("version", stdio_front.HANDSHAKE_VERSIONS)
def test_initialize_is_answered_early_as_the_sdk_answers_it_and_the_session_keeps_its_identity(
        tmp_path: Path, version: str) -> None:
    with server(tmp_path / "early") as (wire, rest):
        wire.send(json.dumps(initialize(version)))
        early = wire.receive(30)
        wire.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        made = wire.call("tools/call", {"name": "memory_crud", "arguments": {
            "action": "create", "items": [{"content": "The early session is bob's."}]}})
    with server(tmp_path / "sdk") as (wire, _):
        wire.send("")  # a blank first line: the front leaves the handshake to the SDK
        wire.send(json.dumps(initialize(version)))
        sdk = wire.receive(60)
    assert early is not None and sdk is not None and early == sdk
    assert early["result"]["protocolVersion"] == version
    assert made["result"]["structuredContent"]["items"][0]["owner_agent_id"] == "bob"
    assert [m for m in rest if m.get("id") == 0] == []


def test_a_handshake_the_front_does_not_know_is_left_to_the_sdk(tmp_path: Path) -> None:
    with server(tmp_path) as (wire, rest):
        wire.send(json.dumps(initialize("2099-01-01")))
        answer = wire.receive(60)
    assert answer is not None and answer["result"]["protocolVersion"] == "2025-11-25"  # the SDK's counter-offer
    assert [m for m in rest if m.get("id") == 0] == []
    refused = stdio_front.answer(initialize("2025-11-25") | {"params": {"protocolVersion": "2025-11-25",
                                                                        "capabilities": {"roots": 5},
                                                                        "clientInfo": {"name": "x", "version": "1"}}},
                                 settings=None)  # type: ignore[arg-type]
    assert refused is None  # capabilities the SDK would refuse: not answered early


def test_the_fronts_versions_are_the_sdks() -> None:
    assert stdio_front.MODERN_VERSIONS == sdk_versions.MODERN_PROTOCOL_VERSIONS
    assert stdio_front.HANDSHAKE_VERSIONS == sdk_versions.HANDSHAKE_PROTOCOL_VERSIONS


def test_a_stop_before_the_first_line_ends_the_server_cleanly(tmp_path: Path) -> None:
    """A host that stops the server before saying anything (the front is waiting for the first line)."""
    with (tmp_path / "stderr.log").open("wb") as stderr:
        proc = subprocess.Popen([agent_memory_command(), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr, env=server_env(tmp_path / "data"))
    deadline = time.monotonic() + 60  # until it waits for its first line (in select: the kernel says so)
    while not Path(f"/proc/{proc.pid}/wchan").read_text().startswith("poll_schedule_timeout"):
        assert time.monotonic() < deadline and proc.poll() is None, "the server never waited for a line"
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    try:
        assert proc.wait(timeout=30) == 0, (tmp_path / "stderr.log").read_text()
    finally:
        proc.kill()
        proc.communicate()
