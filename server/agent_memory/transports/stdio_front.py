"""The stdio handshake answered before anything slow starts.

Importing the MCP SDK costs a stdio server about 1.2 s of CPU on a 2-core machine, more under
load. A host waits for the handshake with a short limit: Claude Code sends the 2026-07-28
generation's `server/discover` probe and, when it goes unanswered in time, falls back to
`initialize`, which a server already serving the probe's generation refuses, and the host drops
its tools. So the first line is read and answered here, with the standard library only, within
milliseconds of the process starting: a `server/discover` (2026-07-28) or an `initialize` (the
handshake generations). The answer is the SDK's own, field for field (tests/e2e/test_stdio_front.py
compares them), and the line still goes to the SDK session as read, so the session is in the same
state as if the SDK had answered; the transport drops the SDK's second answer to it
(`Early.answered`). Anything else (another method, a version the SDK would counter-offer, a
malformed line, a terminal) is left to the SDK untouched.
"""

from __future__ import annotations

import io
import json
import os
import select
from dataclasses import dataclass, field

from agent_memory import __version__
from agent_memory.settings import Settings
from agent_memory.tools.instructions import server_instructions
from agent_memory.transports.stop_signals import held, hold_stop_signals

# As the SDK (mcp_types.version) has them: checked against it by the tests.
MODERN_VERSIONS = ("2026-07-28",)
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CAPABILITIES = {"prompts": {"listChanged": False}, "resources": {"listChanged": False, "subscribe": False},
                "tools": {"listChanged": False}}
SERVER_INFO = {"name": "agent-memory", "version": __version__}
MAX_FIRST_LINE = 1 << 20  # a handshake is a few hundred bytes; past this the SDK reads it
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


@dataclass
class Early:
    """What was read before the SDK: the first line (whole, or as far as it came), and the ids of
    the requests already answered (the SDK's own answer to them is not written again)."""

    read: bytes = b""
    answered: set[str] = field(default_factory=set)  # json.dumps of each id


def id_key(request_id: object) -> str:
    return json.dumps(request_id)


def answer(request: object, settings: Settings) -> dict | None:
    """The SDK's answer to `request` when it is a handshake this module answers, else None."""
    if not isinstance(request, dict) or request.get("jsonrpc") != "2.0":
        return None
    request_id, params = request.get("id"), request.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int) or not isinstance(params, dict):
        return None
    if isinstance(request_id, int) and not -2**63 <= request_id < 2**63:
        return None
    method = request.get("method")
    if method == "server/discover":
        meta = params.get("_meta")
        if not isinstance(meta, dict) or meta.get(_VERSION_KEY) not in MODERN_VERSIONS:
            return None
        result = {"cacheScope": "private", "capabilities": CAPABILITIES, "instructions": server_instructions(settings),
                  "resultType": "complete", "supportedVersions": list(MODERN_VERSIONS), "ttlMs": 0,
                  "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}
    elif method == "initialize":
        version, capabilities = params.get("protocolVersion"), params.get("capabilities")
        if (version not in HANDSHAKE_VERSIONS or not isinstance(capabilities, dict)
                or not all(isinstance(v, dict) for v in capabilities.values())
                or not _client_info(params.get("clientInfo"))):
            return None
        result = {"capabilities": CAPABILITIES, "instructions": server_instructions(settings),
                  "protocolVersion": version, "serverInfo": SERVER_INFO}
    else:
        return None
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _client_info(info: object) -> bool:
    return isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)


def answer_first_line(settings: Settings, fd_in: int = 0, fd_out: int = 1) -> Early:
    """Read the first line of `fd_in` and, when it is a handshake, write its answer to `fd_out`.
    Nothing is read from a terminal (a person typing gets the SDK's replies)."""
    early = Early()
    hold_stop_signals()  # a host may stop the server right after its answer, before the SDK is in
    if os.isatty(fd_in):
        return early
    buffer = bytearray()
    while b"\n" not in buffer and len(buffer) < MAX_FIRST_LINE and not held:
        try:
            if not select.select([fd_in], [], [], 0.2)[0]:
                continue  # nothing yet: look again (a stop signal ends the wait)
            chunk = os.read(fd_in, 65536)
        except InterruptedError:
            continue
        except (OSError, ValueError):
            break
        if not chunk:
            break
        buffer += chunk
    early.read = bytes(buffer)
    line, newline, _ = early.read.partition(b"\n")
    if not newline:
        return early
    try:
        request = json.loads(line)
        json.dumps(request, ensure_ascii=False).encode("utf-8")  # a lone surrogate: the SDK refuses the line
    except (ValueError, RecursionError, UnicodeError):
        return early
    reply = answer(request, settings)
    if reply is not None:
        _write_all(fd_out, (json.dumps(reply, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
        early.answered.add(id_key(reply["id"]))
    return early


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Prefixed(io.RawIOBase):
    """A raw reader of `fd` that first gives back `prefix` (what the front already read)."""

    def __init__(self, prefix: bytes, fd: int) -> None:
        self._prefix, self._fd = prefix, fd

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._prefix:
            count = min(len(buffer), len(self._prefix))
            buffer[:count] = self._prefix[:count]
            self._prefix = self._prefix[count:]
            return count
        data = os.read(self._fd, len(buffer))
        buffer[:len(data)] = data
        return len(data)
