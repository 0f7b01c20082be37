"""The hook helper: one long-lived process per installation and configuration that holds the
store and the embedding model open, so a host's hook (`agent-memory hook HOST`, a process that
starts in tens of milliseconds) gets its answer in a few more.

Started by the hook command on first use (`python -m agent_memory.hooks.daemon --socket PATH`),
it listens on a Unix socket in a directory private to the user (mode 0600), serves until it has
had no request for `hook_idle_minutes`, and works as the configured identity through the
application's use cases, the door the MCP tools go through (never an MCP session to itself), so
permissions, secrets redaction, audit and the multi-process rules of the store apply to it as to
any server process. One helper per socket: a second one finds the lock taken and exits.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import structlog
from anyio.abc import SocketStream

from agent_memory.bootstrap import open_app
from agent_memory.config import ConfigError, Settings, load_settings
from agent_memory.core.model.rules import Limits
from agent_memory.hooks.doors import Door, LocalDoor, Refused, RemoteDoor, Unreachable, read_token
from agent_memory.hooks.events import HookError, HookEvents, HookSettings
from agent_memory.hooks.hosts import event_of
from agent_memory.hooks.later import deadline_of
from agent_memory.logging import configure_logging

log = structlog.get_logger("agent_memory.hooks")

MAX_REQUEST_BYTES = 2_500_000
DELIVER_EVERY_SECONDS = 30.0  # capture a team's server did not take is tried again this often


def _prompt_floor(settings: Settings) -> float:
    """The prompt hook's relevance floor: hook_min_score, chosen on the curve of recall by meaning;
    a helper on the embedded store without an index by meaning (vector_backend none) matches by
    words alone and keeps the server's retrieval_min_score."""
    if not settings.hook_server_url and settings.vector_backend == "none":
        return settings.retrieval_min_score
    return settings.hook_min_score


def host_output(host: str, event_name: str, context: str) -> str:
    """What the host reads on stdout: its JSON for added context (Claude Code and Gemini CLI
    take `hookSpecificOutput.additionalContext`), nothing when there is no context."""
    spec = event_of(host, event_name)
    if not context or spec is None or not spec.answers:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": context}})


class Helper:
    def __init__(self, settings: Settings, door: Door) -> None:
        self.events = HookEvents(HookSettings(
            locate=lambda directory: settings.project_in(directory, always=True),
            budget_chars=settings.hook_budget_chars, min_score=_prompt_floor(settings),
            start_chars=settings.hook_start_chars,
            state_dir=settings.data_path / "hooks"), door)
        self.last_request = time.monotonic()

    async def answer(self, request: dict[str, Any]) -> dict[str, str]:
        event = request.get("event")
        if not isinstance(event, dict):
            return {"stdout": "", "note": "the request holds no event"}
        host = str(request.get("host") or "")
        name = str(event.get("hook_event_name") or "")
        env = request.get("env") if isinstance(request.get("env"), dict) else {}
        try:
            context, note = await self.events.handle(host, name, event, env, str(request.get("cwd") or ""),
                                                     deadline_of(request.get("deadline")))
        except HookError as exc:
            log.warning("hook_refused", hook_event=name, reason=str(exc)[:300])
            return {"stdout": "", "note": str(exc)}
        return {"stdout": host_output(host, name, context), "note": note}

    async def serve_one(self, stream: SocketStream) -> None:
        """One hook's request; then, with the hook answered, what a team's server did not take
        before is sent (if it answers now). Nothing a client sends or fails to send may stop the helper."""
        try:
            await self._serve_one(stream)
        except Exception:
            log.warning("hook_request_dropped", exc_info=True)
        await self.deliver()

    async def _serve_one(self, stream: SocketStream) -> None:
        async with stream:
            self.last_request = time.monotonic()
            try:
                raw = await _read_all(stream)
                request = json.loads(raw)
                if not isinstance(request, dict):
                    raise ValueError("not an object")
            except (ValueError, TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError):
                await _send(stream, {"stdout": "", "note": "unreadable request"})
                return
            # The work finishes even when the hook process gave up waiting (a capture event's turns
            # must be logged); only the answer is then lost.
            with anyio.CancelScope(shield=True):
                answer = await self._answer_safely(request)
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await _send(stream, answer)
            self.last_request = time.monotonic()

    async def _answer_safely(self, request: dict[str, Any]) -> dict[str, str]:
        try:
            return await self.answer(request)
        except Exception:
            log.exception("hook_failed")
            return {"stdout": "", "note": "failed (see the hook helper's log)"}

    async def deliver(self) -> None:
        """Send what a team's server did not take before (nothing to do on the embedded store)."""
        if not self.events.pending:
            return
        try:
            sent = await self.events.deliver()
        except Unreachable:
            return  # still down: the next event or the next round tries again
        except Exception:
            log.exception("hook_delivery_failed")
            return
        if sent:
            log.info("hook_capture_delivered", sent=sent)

    async def run_spooled(self, spool: Path) -> None:
        """Capture events a hook queued while this helper was starting, oldest first."""
        if not spool.is_dir():
            return
        for path in sorted(spool.glob("*.json")):
            try:
                request = json.loads(path.read_bytes())
            except (OSError, ValueError):
                request = None
            if isinstance(request, dict):
                request.pop("deadline", None)  # its hook is long gone: nothing to answer in time
                await self._answer_safely(request)
            with contextlib.suppress(OSError):
                path.unlink()


async def _read_all(stream: SocketStream) -> bytes:
    chunks: list[bytes] = []
    size = 0
    with anyio.fail_after(10):
        while True:
            try:
                chunk = await stream.receive(65536)
            except anyio.EndOfStream:
                break
            size += len(chunk)
            if size > MAX_REQUEST_BYTES:
                raise ValueError("request too large")
            chunks.append(chunk)
    return b"".join(chunks)


async def _send(stream: SocketStream, answer: dict[str, str]) -> None:
    await stream.send(json.dumps(answer).encode())


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("hook_helper_stopping", signal=signal.Signals(signum).name)
            scope.cancel()
            return


@contextlib.asynccontextmanager
async def door_for(settings: Settings) -> AsyncIterator[Door]:
    """The team's server when `hook_server_url` names one (under the developer's token), else the
    embedded store, opened for the helper's life.

    Raises:
        Refused: no usable token for the team's server."""
    if settings.hook_server_url:
        yield RemoteDoor(settings.hook_server_url, read_token(settings.hook_token_file),
                         Limits(max_content_chars=settings.max_content_chars))  # nothing held open between calls
        return
    async with open_app(settings) as app:
        yield LocalDoor(app.door, app.launch_caller)


async def serve(settings: Settings, socket_path: Path) -> None:
    idle = settings.hook_idle_minutes * 60
    async with door_for(settings) as door:
        helper = Helper(settings, door)
        with contextlib.suppress(FileNotFoundError):
            socket_path.unlink()  # a stale socket of a helper that died (the lock says none runs)
        listener = await anyio.create_unix_listener(socket_path)
        os.chmod(socket_path, 0o600)
        log.info("hook_helper_started", socket=str(socket_path), pid=os.getpid())
        async with listener, anyio.create_task_group() as tg:
            helper.events.later.attach(tg)  # a reflection that outlasts its hook goes on here
            tg.start_soon(listener.serve, helper.serve_one)
            tg.start_soon(_stop_on_signal, tg.cancel_scope)
            await helper.run_spooled(socket_path.with_suffix(".spool"))
            while time.monotonic() - helper.last_request < idle:
                await anyio.sleep(min(DELIVER_EVERY_SECONDS, idle))
                await helper.deliver()
            tg.cancel_scope.cancel()
        with contextlib.suppress(FileNotFoundError):
            socket_path.unlink()
        log.info("hook_helper_stopped", reason="idle")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent_memory.hooks.daemon")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--config")
    args = parser.parse_args(argv)
    socket_path = Path(args.socket)
    lock_file = open(socket_path.with_suffix(".lock"), "a")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another helper serves this socket
    lock_file.truncate(0)
    lock_file.write(f"{os.getpid()}\n")  # who serves it, for `kill $(cat ...lock)`
    lock_file.flush()
    try:
        settings = load_settings(config_file=args.config)
    except ConfigError as exc:
        print(f"agent-memory hook helper: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format, settings.log_dir)
    try:
        anyio.run(serve, settings, socket_path)
    except Refused as exc:  # no usable token for the team's server
        print(f"agent-memory hook helper: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
