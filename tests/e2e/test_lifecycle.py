"""Starting and stopping real `agent-memory serve` processes: Ctrl-C in a terminal, SIGINT and
SIGTERM on both transports (exit 0, `server_stopped`, no traceback), the terminal hint, and a busy
port (exit 3, said before anything starts)."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_memory.transports.serve import TERMINAL_HINT
from tests.e2e.servers import SECRET, agent_memory_command, free_port, server_env, wait_for_port

# Makes the pty its controlling terminal (the child leads a new session), then becomes the server,
# so a ^C typed on the terminal reaches it as it would from a shell.
ON_A_TERMINAL = ("import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
                 "os.execv(sys.argv[1], sys.argv[1:])")


def wait_for_line(log: Path, event: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while f'"{event}"' not in log.read_text():
        assert proc.poll() is None, f"server exited: {log.read_text()}"
        assert time.monotonic() < deadline, f"no {event} in {timeout} s: {log.read_text()}"
        time.sleep(0.05)


def stopped_cleanly(proc: subprocess.Popen[bytes], log: Path, transport: str) -> list[dict]:
    code = proc.wait(timeout=30)
    text = log.read_text()
    assert code == 0, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    events = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert {"event": "server_stopped", "transport": transport} in [
        {k: e.get(k) for k in ("event", "transport")} for e in events]
    return events


def test_ctrl_c_in_a_terminal_stops_stdio_serve_after_a_one_line_hint(tmp_path: Path) -> None:
    import pty

    log = tmp_path / "stderr.log"
    master, slave = pty.openpty()
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-c", ON_A_TERMINAL, agent_memory_command(), "serve"],
                                stdin=slave, stdout=slave, stderr=err, env=server_env(tmp_path / "data"),
                                start_new_session=True)
    os.close(slave)
    try:
        wait_for_line(log, "server_starting", proc)
        os.write(master, b"\x03")  # ^C: the terminal sends SIGINT to its foreground process group
        events = stopped_cleanly(proc, log, "stdio")
        assert {"event": "server_stopping", "signal": "SIGINT"}.items() <= events[-2].items()
        os.write(master, b"\n")  # Enter afterwards: nothing left to print a traceback
        hints = [line for line in log.read_text().splitlines() if not line.startswith("{")]
        assert hints == [TERMINAL_HINT]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_stdio_serve_with_a_host_attached(tmp_path: Path, signum: signal.Signals) -> None:
    log = tmp_path / "stderr.log"
    with log.open("w") as err:
        proc = subprocess.Popen([agent_memory_command(), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=err, env=server_env(tmp_path / "data"))
    assert proc.stdin and proc.stdout
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    proc.stdin.write(json.dumps(initialize).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1  # serving, with the host's pipe still open
    proc.send_signal(signum)
    stopped_cleanly(proc, log, "stdio")
    assert TERMINAL_HINT not in log.read_text()  # stdin is no terminal
    proc.stdin.close()
    proc.stdout.close()


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT", "stdin"])
def test_a_stop_right_after_a_write_keeps_it_and_exits_at_once(tmp_path: Path, stop: str) -> None:
    """A host stops its server the moment it is done (Claude Code kills it about 0.5 s after
    SIGINT/SIGTERM): the process must be gone well before that, with the acknowledged write and its
    audit row on disk, also while the vector model is still loading (it starts after tools/list)."""
    log = tmp_path / "stderr.log"
    with log.open("w") as err:
        proc = subprocess.Popen([agent_memory_command(), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=err, env=server_env(tmp_path / "data"))
    assert proc.stdin and proc.stdout
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory_crud", "arguments": {
            "action": "create", "items": [{"content": "kept across a stop"}]}}},
    ]
    answers: dict[int, dict] = {}
    for request in requests:
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        if "id" in request:
            answer = json.loads(proc.stdout.readline())
            answers[answer["id"]] = answer
    created = answers[3]["result"]["structuredContent"]["items"][0]["id"]
    stopped = time.monotonic()
    if stop == "stdin":
        proc.stdin.close()
    else:
        proc.send_signal(getattr(signal, stop))
    stopped_cleanly(proc, log, "stdio")
    assert time.monotonic() - stopped < 5  # ~0.05 s idle on 2 cores; generous for a loaded CI machine
    with sqlite3.connect(tmp_path / "data" / "memory.db") as db:
        assert db.execute("SELECT content FROM entries WHERE id = ?", (created,)).fetchall() == [
            ("kept across a stop",)]
        assert db.execute("SELECT outcome FROM audit WHERE entry_id = ? AND action = 'create'",
                          (created,)).fetchall() == [("ok",)]
    if not proc.stdin.closed:
        proc.stdin.close()
    proc.stdout.close()


def start_http(tmp_path: Path, port: int) -> tuple[subprocess.Popen[bytes], Path]:
    log = tmp_path / "http.log"
    with log.open("w") as out:
        proc = subprocess.Popen([agent_memory_command(), "serve", "--http", "--port", str(port)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=server_env(tmp_path / "data", MEMORY_AUTH_SECRET=SECRET))
    wait_for_port(proc, port, log)
    return proc, log


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_http_serve_with_exit_0(tmp_path: Path, signum: signal.Signals) -> None:
    proc, log = start_http(tmp_path, free_port())
    proc.send_signal(signum)
    events = stopped_cleanly(proc, log, "http")
    assert {"event": "server_stopping", "signal": signum.name}.items() <= events[-2].items()


def test_a_busy_port_exits_3_with_the_reason_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = subprocess.run([agent_memory_command(), "serve", "--http", "--port", str(port)],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                              env=server_env(tmp_path / "data", MEMORY_AUTH_SECRET=SECRET))
    assert busy.returncode == 3
    assert busy.stderr.strip() == (f"agent-memory: port {port} is already in use on 127.0.0.1 (another server is "
                                   f"listening on 127.0.0.1:{port}); stop it or choose another port with --port or "
                                   "MEMORY_HTTP_PORT")
    assert "server_starting" not in busy.stderr and busy.stdout == ""


def serve_refused(tmp_path: Path, data: Path, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
    if flags:
        flags = (*flags, "--port", str(free_port()))
    return subprocess.run([agent_memory_command(), "serve", *flags], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60, env=server_env(data, MEMORY_AUTH_SECRET=SECRET, **env))


@pytest.mark.parametrize("flags", [(), ("--http",)], ids=["stdio", "http"])
def test_a_store_that_cannot_be_opened_exits_2_in_one_line(tmp_path: Path, flags: tuple[str, ...]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    not_a_folder = serve_refused(tmp_path, blocker / "data", *flags)
    assert not_a_folder.returncode == 2 and not_a_folder.stdout == ""
    assert not_a_folder.stderr.strip().splitlines()[-1] == (
        f"agent-memory: cannot open the SQLite store {blocker}/data/memory.db: Not a directory")
    assert "Traceback" not in not_a_folder.stderr

    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "memory.db").write_bytes(b"this is not a database" * 200)
    not_a_database = serve_refused(tmp_path, garbage, *flags)  # used to hang on aiosqlite's thread
    assert not_a_database.returncode == 2 and "Traceback" not in not_a_database.stderr
    assert not_a_database.stderr.strip().splitlines()[-1] == (
        f"agent-memory: cannot open the SQLite store {garbage}/memory.db: file is not a database")
    assert (garbage / "memory.db").read_bytes() == b"this is not a database" * 200  # left as it was
    assert "server_starting" not in not_a_database.stderr or not flags  # HTTP checks before it starts


@pytest.mark.parametrize("flags", [(), ("--http",)], ids=["stdio", "http"])
def test_an_unreachable_postgresql_exits_2_with_libpqs_reason(tmp_path: Path, flags: tuple[str, ...]) -> None:
    pytest.importorskip("psycopg")
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    refused = serve_refused(tmp_path, tmp_path / "data", *flags, MEMORY_BACKEND="postgres",
                            MEMORY_POSTGRES_URL=f"postgresql://memory:hunter2@127.0.0.1:{port}/memory")
    assert refused.returncode == 2 and refused.stdout == "" and "Traceback" not in refused.stderr
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith(f"agent-memory: cannot connect to postgresql://memory:***@127.0.0.1:{port}/memory: "
                           f"connection to server at \"127.0.0.1\", port {port} failed: Connection refused")
    assert "hunter2" not in refused.stderr
    assert "error connecting" not in refused.stderr  # one try, not the pool's retries until its timeout


def test_the_console_refuses_a_store_that_cannot_be_opened_before_printing_a_url(tmp_path: Path) -> None:
    (tmp_path / "memory.db").write_bytes(b"this is not a database" * 200)
    console = subprocess.run([agent_memory_command(), "console", "--port", str(free_port())],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                             env=server_env(tmp_path, MEMORY_AUTH_SECRET=SECRET))
    assert console.returncode == 2 and console.stdout == "" and "Traceback" not in console.stderr
    assert console.stderr.strip().splitlines()[-1].endswith("memory.db: file is not a database")
