"""MCP over stdin/stdout that answers every malformed line instead of dropping it.

The SDK's `stdio_server` hands a line its parser rejects (a lone surrogate escape, JSON nested past
its recursion limit, an integer over 4,300 digits, anything not a JSON-RPC object) to the session,
which logs and drops it: the client waits for its own timeout. Here such a line gets a JSON-RPC
error, -32700 when the SDK cannot parse it and -32600 when it parses but is no valid message, with
the request's id when a lenient parse recovers it, else null (as JSON-RPC 2.0 asks, malformed
notifications are answered with id null too). Malformed responses are logged, never answered.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from agent_memory.transports.deep_arguments import cut_deep_tool_call
from agent_memory.transports.stdio_front import Early, Prefixed, id_key

log = structlog.get_logger("agent_memory.stdio")

_MAX_ID_CHARS = 256
_MAX_ID_INT = 2**63
_UNPARSED = object()
# A top-level "id" member before any nested container (where a line that does not parse is
# truncated or broken); strings are skipped whole, so an "id" inside one never matches.
_TOP_LEVEL_ID = re.compile(
    r'\s*\{(?:[^{}\[\]"]|"(?:[^"\\]|\\.)*")*?"id"\s*:\s*(-?\d{1,19}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")')


def _claim(fd: int, diversion: int) -> int:
    """Serve the wire on `fd` from a private duplicate and point `fd` at `diversion`, so stray
    reads and prints (handlers, child processes) miss the protocol; returns the duplicate."""
    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.dup2(diversion, fd)
    os.close(diversion)
    return private


def _safe_id(value: object) -> types.RequestId | None:
    """`value` if it is a usable request id small enough to send back, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and -_MAX_ID_INT <= value < _MAX_ID_INT:
        return value
    if isinstance(value, str) and len(value) <= _MAX_ID_CHARS:
        try:
            value.encode("utf-8")  # a lone surrogate cannot go back on the wire
        except UnicodeEncodeError:
            return None
        return value
    return None


def _lenient_parse(line: str) -> object:
    """`line` as Python's json reads it (big integers kept as a marker), or _UNPARSED."""
    try:
        return json.loads(line, parse_int=lambda digits: int(digits) if len(digits) <= 20 else _UNPARSED)
    except (ValueError, RecursionError):
        return _UNPARSED


def _answer(line: str, problem: str, *, parses: bool) -> types.JSONRPCError | None:
    """The error answering a rejected line; None for a response, which is never answered."""
    root = _lenient_parse(line)
    request_id: types.RequestId | None = None
    if isinstance(root, dict):
        if "method" not in root and ("result" in root or "error" in root):
            log.warning("stdio_response_dropped", reason=problem, id=_safe_id(root.get("id")), chars=len(line))
            return None
        request_id = _safe_id(root.get("id"))
    elif root is _UNPARSED and (found := _TOP_LEVEL_ID.match(line, 0, 65536)):
        request_id = _safe_id(_lenient_parse(found.group(1)))
    code, title = (types.INVALID_REQUEST, "Invalid request") if parses else (types.PARSE_ERROR, "Parse error")
    log.warning("stdio_message_rejected", code=code, reason=problem, id=request_id, chars=len(line))
    return types.JSONRPCError(jsonrpc="2.0", id=request_id,
                              error=types.ErrorData(code=code, message=f"{title}: {problem}"[:200]))


def _check(line: str) -> types.JSONRPCMessage | types.JSONRPCError | None:
    """The message on `line`, or the error answering it, or None (nothing to do)."""
    if not line.strip():
        return None  # a blank line carries no message, so nothing to answer
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        if first["type"] == "json_invalid":
            if "recursion limit" in first["msg"] and (call := cut_deep_tool_call(line)) is not None:
                try:  # arguments cut to a depth the tool refuses by name (deep_arguments.py)
                    return types.jsonrpc_message_adapter.validate_python(call, by_name=False)
                except ValidationError:
                    pass
            return _answer(line, first["msg"].removeprefix("Invalid JSON: "), parses=False)
        where = ".".join(str(part) for part in first["loc"][1:])
        return _answer(line, f"{where}: {first['msg']}" if where else first["msg"], parses=True)
    # The SDK reads a request whose id is no string or integer as a notification and never answers.
    if isinstance(message, types.JSONRPCNotification) and '"id"' in line:
        root = _lenient_parse(line)
        if isinstance(root, dict) and "id" in root:
            return _answer(line, "id must be a string or an integer", parses=True)
    return message


def _read_lines(stdin: io.TextIOWrapper, send: MemoryObjectSendStream[str], token: anyio.lowlevel.EventLoopToken,
                ) -> None:
    """Hand each line of `stdin` to the loop until end of input or until nobody takes them any more.
    Runs in a daemon thread: a read blocked on a terminal or an idle pipe never holds up a stop."""
    try:
        while line := stdin.readline():
            anyio.from_thread.run(send.send, line, token=token)
    except BaseException:  # noqa: BLE001 - the loop stopped or the reader left: nothing is waiting for lines
        return
    finally:
        try:
            anyio.from_thread.run_sync(send.close, token=token)
        except BaseException:  # noqa: BLE001 - the loop is gone
            pass


@asynccontextmanager
async def stdio_transport(stop: anyio.Event | None = None, early: Early | None = None) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """The session's streams over this process's stdin and stdout (a drop-in for the SDK's
    `stdio_server`); while serving, fd 0 reads the null device and fd 1 writes to stderr. Setting
    `stop` ends the input as end of file would (the session then finishes cleanly). `early`: what
    was read before (it is read again first) and the requests already answered (`stdio_front`): the
    session's own answers to those are not written a second time."""
    early = early or Early()
    stdin_fd = _claim(0, os.open(os.devnull, os.O_RDONLY))
    stdout_fd = _claim(1, os.dup(2))
    # closefd=False: the reader thread may still block reading after exit; the fd must not be recycled.
    stdin_bytes = io.BufferedReader(Prefixed(early.read, stdin_fd))
    stdout_bytes = os.fdopen(stdout_fd, "wb", closefd=False)
    stdin = io.TextIOWrapper(stdin_bytes, encoding="utf-8", errors="replace")
    stdout_text = io.TextIOWrapper(stdout_bytes, encoding="utf-8")
    to_session, from_stdin = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_stdout, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    answers = to_stdout.clone()
    line_sender, lines = anyio.create_memory_object_stream[str](0)
    threading.Thread(target=_read_lines, args=(stdin, line_sender, anyio.lowlevel.current_token()),
                     name="agent-memory stdin", daemon=True).start()

    async def read_stdin() -> None:
        async with to_session, answers, lines, anyio.create_task_group() as reading:
            if stop is not None:
                reading.start_soon(_cancel_when_set, stop, reading.cancel_scope)
            async for line in lines:
                checked = _check(line)
                if isinstance(checked, types.JSONRPCError):
                    await answers.send(SessionMessage(checked))
                elif checked is not None:
                    await to_session.send(SessionMessage(checked))
            reading.cancel_scope.cancel()  # end of input: stop waiting for `stop`

    def write_line(text: str) -> None:
        stdout_text.write(text)
        stdout_text.flush()

    async def write_stdout() -> None:
        async with from_session:
            async for item in from_session:
                if early.answered and _answered_before(item.message, early.answered):
                    continue
                # Write and flush in one trip to a worker thread (a full pipe must not block the loop).
                await anyio.to_thread.run_sync(
                    write_line, item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n")

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_stdin)
            tg.start_soon(write_stdout)
            yield from_stdin, to_stdout
    finally:
        os.dup2(stdin_fd, 0)
        os.dup2(stdout_fd, 1)


def _answered_before(message: object, answered: set[str]) -> bool:
    """Whether `message` answers a request the front answered already (each is dropped once)."""
    if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
        return False
    key = id_key(message.id)
    if key not in answered:
        return False
    answered.discard(key)
    if isinstance(message, types.JSONRPCError):  # the front and the SDK disagree: say so, keep serving
        log.warning("stdio_handshake_disagreement", id=_safe_id(message.id), code=message.error.code)
    return True


async def _cancel_when_set(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
