"""`agent-memory hook HOST`: the command a host runs on each hook event.

It must start fast and never break the host, so it imports only the standard library: it reads
the event on stdin, hands it to the hook helper (a long-lived process holding the store and the
embedding model open, started here on first use and gone after an idle time) over a Unix socket
private to this user, and prints what the helper answers. Every failure exits 0 with one line on
stderr; stdout carries only the context for the host.

The host's events, their time limits and which are spooled are in one table (`hosts.py`), the one
`setup` installs from: a capture event (Stop, AfterAgent, PreCompact, PreCompress, SessionEnd) that
cannot be handed over in time is spooled to a file the helper reads when it starts, so a cold start
loses no turns.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from agent_memory.hooks.hosts import DEFAULT_LIMIT, HOSTS as HOOK_HOSTS, event_of

PROTOCOL = 1
MAX_EVENT_BYTES = 2_000_000
MAX_ANSWER_BYTES = 4_000_000
MAX_LOG_BYTES = 5_000_000
HOSTS = tuple(HOOK_HOSTS)


FAILURES_FILE = "hook-failures.jsonl"  # in the runtime directory: `agent-memory warnings` reads it
MAX_FAILURES_BYTES = 256_000  # then the file is kept as .1 and a new one begun


class HookFailed(Exception):
    """Why this hook did nothing (one line for stderr). `expected`: nothing is wrong (the helper
    is starting); `shown`: the user can act on it, so the host is asked to show it too."""

    def __init__(self, message: str, *, expected: bool = False, shown: bool = True) -> None:
        super().__init__(message)
        self.expected = expected
        self.shown = shown and not expected


def runtime_dir() -> Path:
    """A directory only this user can enter: $XDG_RUNTIME_DIR/agent-memory, else
    /tmp/agent-memory-<uid> (short: a Unix socket path is limited to about 100 bytes).

    Raises:
        HookFailed: the directory exists but belongs to someone else or is open to others."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        path = Path(base) / "agent-memory"
    else:
        path = Path(os.environ.get("TMPDIR") or "/tmp") / f"agent-memory-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        info = path.lstat()
    except OSError as exc:
        raise HookFailed(f"cannot use {path}: {exc.strerror}") from None
    if not path.is_dir() or path.is_symlink() or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise HookFailed(f"{path} is not a private directory of this user; remove it")
    return path


def helper_key(config: str | None) -> str:
    """One helper per installation and configuration: the interpreter, the config file and every
    MEMORY_* variable (the helper is started with the same ones, so it has the same settings)."""
    memory = sorted((k, v) for k, v in os.environ.items() if k.startswith("MEMORY_") and k != "MEMORY_HOOK_TIME_LIMIT")
    config = config or os.environ.get("MEMORY_CONFIG")
    seed = json.dumps([PROTOCOL, sys.executable, os.path.abspath(config) if config else None, memory])
    return hashlib.sha256(seed.encode()).hexdigest()[:16]


def _limit(host: str, event_name: str) -> float:
    """Seconds the hook may take in all, well inside the host's own timeout (`hosts.py`);
    MEMORY_HOOK_TIME_LIMIT (seconds) overrides them all."""
    raw = os.environ.get("MEMORY_HOOK_TIME_LIMIT")
    if raw:
        try:
            return max(0.1, min(float(raw), 600.0))
        except ValueError:
            pass
    spec = event_of(host, event_name)
    return spec.limit if spec is not None else DEFAULT_LIMIT


def _ask(path: Path, request: bytes, deadline: float) -> dict:
    """Send one request to the helper and read its one-line JSON answer.

    Raises:
        ConnectionError/FileNotFoundError: no helper listens there.
        HookFailed: it answered nothing usable in time."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(max(0.05, deadline - time.monotonic()))
        conn.connect(str(path))
        conn.sendall(request)
        conn.shutdown(socket.SHUT_WR)
        chunks: list[bytes] = []
        size = 0
        while True:
            conn.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                raise HookFailed("the hook helper did not answer in time", shown=False) from None
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise HookFailed("the hook helper's answer is too large")
            chunks.append(chunk)
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError:
        raise HookFailed("the hook helper gave no answer (see its log)") from None
    if not isinstance(answer, dict):
        raise HookFailed("the hook helper's answer is not an object")
    return answer


def _start_helper(path: Path, config: str | None) -> Any:
    import subprocess

    args = [sys.executable, "-m", "agent_memory.hooks.daemon", "--socket", str(path)]
    if config:
        args += ["--config", os.path.abspath(config)]
    log = path.with_suffix(".log")
    try:
        fresh = log.stat().st_size > MAX_LOG_BYTES  # a new helper starts a new log past this size
    except OSError:
        fresh = False
    with open(log, "wb" if fresh else "ab") as err:
        os.chmod(log, 0o600)
        return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True, close_fds=True, cwd="/")


def _why_it_stopped(path: Path) -> str:
    """The helper's last log line (it failed to start: e.g. an invalid setting)."""
    try:
        lines = path.with_suffix(".log").read_text(errors="replace").strip().splitlines()
    except OSError:
        lines = []
    return (lines[-1] if lines else "the hook helper could not start")[:300]


def _spool(path: Path, request: bytes) -> None:
    spool = path.with_suffix(".spool")
    spool.mkdir(mode=0o700, exist_ok=True)
    name = spool / f"{time.time_ns()}-{os.getpid()}.json"
    fd = os.open(name.with_suffix(".part"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(request)
    os.replace(name.with_suffix(".part"), name)


def deliver(request: bytes, host: str, event_name: str, config: str | None, deadline: float) -> dict:
    """The helper's answer; starts the helper when none listens and waits for it until `deadline`.

    Raises:
        HookFailed: no answer in time (a capture event is then spooled for the helper)."""
    path = runtime_dir() / f"hook-{helper_key(config)}.sock"
    helper = None
    while True:
        try:
            return _ask(path, request, deadline)
        except (FileNotFoundError, ConnectionRefusedError):
            if helper is None:
                helper = _start_helper(path, config)
            elif helper.poll():  # it exited with an error (0: another helper is starting)
                raise HookFailed(_why_it_stopped(path)) from None
        except OSError:  # a helper starting or busy (e.g. timed out connecting): try again until the deadline
            pass
        if time.monotonic() + 0.05 >= deadline:
            break
        time.sleep(0.05)
    spec = event_of(host, event_name)
    if spec is not None and spec.captures:
        _spool(path, request)
        raise HookFailed("the hook helper is starting; this event is queued for it", expected=True)
    raise HookFailed("the hook helper is starting; no memory this time", expected=True)


def _flags(args: list[str]) -> tuple[str | None, dict[str, str]]:
    """`--config FILE` and setting flags (`--agent-id X`, `--team T`, ...: any setting, as for
    `serve`) as MEMORY_* variables; the helper reads them (and an invalid one stops it, which
    this hook then reports).

    Raises:
        HookFailed: a flag without a value, or an argument that is not a flag."""
    config, settings = None, {}
    words = iter(args)
    for word in words:
        name, _, value = word.partition("=")
        if not name.startswith("--") or len(name) < 3:
            raise HookFailed(f"unexpected argument {word[:60]!r}")
        if not _:
            value = next(words, None)  # type: ignore[assignment]
            if value is None:
                raise HookFailed(f"{name} needs a value")
        if name == "--config":
            config = value
        else:
            settings["MEMORY_" + name[2:].replace("-", "_").upper()] = value
    return config, settings


def record_failure(host: str, event_name: str, reason: str) -> bool:
    """One JSON line in this user's runtime directory, which `agent-memory warnings` reads: when,
    which host and event, and why (the reason is ours or a tool's error, never the event's text)."""
    try:
        path = runtime_dir() / FAILURES_FILE
        if path.exists() and path.stat().st_size > MAX_FAILURES_BYTES:
            os.replace(path, path.with_name(FAILURES_FILE + ".1"))
        now = time.time()
        stamp = f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(now))}.{int(now % 1 * 1e6):06d}Z"
        line = json.dumps({"timestamp": stamp, "level": "warning",
                           "event": "hook_failed", "host": host[:40], "hook_event": event_name[:40],
                           "reason": reason[:300]})
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            out.write(line + "\n")
    except (OSError, HookFailed):  # nowhere private to write: stderr has said it
        return False
    return True


def _fail(host: str, event_name: str, reason: str, *, shown: bool, printed: bool) -> None:
    """A failure said where a user looks: one stderr line, the host's own message line (its
    `systemMessage`, which Claude Code and Gemini CLI show the user) unless the hook printed
    context already, and the failures `agent-memory warnings` lists."""
    print(f"agent-memory hook: {reason[:500]}", file=sys.stderr)
    listed = " (agent-memory warnings)" if record_failure(host, event_name, reason) else ""
    if shown and not printed and host in HOOK_HOSTS:
        sys.stdout.write(json.dumps({"systemMessage": f"agent-memory: {reason[:200]}{listed}"}))
        sys.stdout.flush()


def main(args: list[str]) -> int:
    """`agent-memory hook HOST [--config FILE]`: always exits 0 (a hook must never break its host)."""
    started = time.monotonic()
    host, name, printed = (args[0] if args else ""), "", False
    try:
        if not args or args[0] not in HOSTS:
            raise HookFailed(f"usage: agent-memory hook {{{','.join(HOSTS)}}} [--config FILE] [--SETTING VALUE ...] "
                             "(event JSON on stdin)")
        raw = sys.stdin.buffer.read(MAX_EVENT_BYTES + 1)
        if len(raw) > MAX_EVENT_BYTES:
            raise HookFailed("the event on stdin is too large", shown=False)
        try:
            event = json.loads(raw or b"{}")
        except ValueError:
            raise HookFailed("the event on stdin is not JSON", shown=False) from None
        if not isinstance(event, dict):
            raise HookFailed("the event on stdin is not a JSON object", shown=False)
        name = str(event.get("hook_event_name") or "")
        env = {k: os.environ[k] for k in ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR") if k in os.environ}
        config, settings = _flags(args[1:])
        os.environ.update(settings)  # the helper's key and the helper's own settings
        deadline = started + _limit(host, name)
        # the deadline on the wall clock too: the helper answers before it (work that takes longer goes on)
        request = json.dumps({"v": PROTOCOL, "host": host, "event": event, "env": env, "cwd": os.getcwd(),
                              "deadline": time.time() + deadline - time.monotonic()}).encode()
        answer = deliver(request, host, name, config, deadline)
        out = answer.get("stdout")
        if isinstance(out, str) and out:
            sys.stdout.write(out)
            sys.stdout.flush()
            printed = True
        note = answer.get("note")
        if isinstance(note, str) and note:  # the helper did part of the work and a tool refused the rest
            _fail(host, name, note, shown=True, printed=printed)
    except HookFailed as exc:
        if exc.expected:
            print(f"agent-memory hook: {exc}", file=sys.stderr)
        else:
            _fail(host, name, str(exc), shown=exc.shown, printed=printed)
    except Exception as exc:  # never a traceback into the host
        _fail(host, name, f"failed ({type(exc).__name__})", shown=True, printed=printed)
    return 0
