"""Signing in to `agent-memory console` (a real process): the printed URL carries a one-time code,
never a token; the code is traded once for an operator session token (POST /console/api/session),
which is recorded and revocable; a used, expired or unknown code gets 401 JSON; `--open` hands the
browser a private redirect file, so no code or token is on the browser's command line."""

from __future__ import annotations

import json
import os
import queue
import re
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.e2e.servers import SECRET, agent_memory_command, free_port, http_server, server_env, wait_for_port

CODE_URL = re.compile(r"memory console: (http://127\.0\.0\.1:(\d+)/console/#code=([A-Za-z0-9_-]+))$")


@dataclass
class Console:
    proc: subprocess.Popen[str]
    base: str
    env: dict[str, str]
    lines: queue.Queue[str]
    printed: list[str]  # everything it printed on stdout

    def next_code(self) -> str:
        """The code of the next sign-in URL the console prints (within 60 s)."""
        while True:
            line = self.lines.get(timeout=60)
            found = CODE_URL.search(line.strip())
            if found:
                return found.group(3)

    def exchange(self, code: object) -> httpx.Response:
        return httpx.post(f"{self.base}/console/api/session", json={"code": code}, timeout=30)

    def whoami(self, bearer: str) -> httpx.Response:
        return httpx.get(f"{self.base}/console/api/whoami", headers={"Authorization": f"Bearer {bearer}"}, timeout=30)


@contextmanager
def console(tmp_path: Path, *args: str, **env: str) -> Iterator[Console]:
    port = free_port()
    environment = server_env(tmp_path / "data", MEMORY_AUTH_SECRET=SECRET, MEMORY_VECTOR_BACKEND="none", **env)
    log_path = tmp_path / "console.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([agent_memory_command(), "console", "--port", str(port), *args], env=environment,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
        lines: queue.Queue[str] = queue.Queue()
        printed: list[str] = []

        def read(stdout: object) -> None:
            for line in stdout:  # type: ignore[attr-defined]
                printed.append(line)
                lines.put(line)

        threading.Thread(target=read, args=(proc.stdout,), daemon=True).start()
        try:
            wait_for_port(proc, port, log_path)  # type: ignore[arg-type]
            yield Console(proc, f"http://127.0.0.1:{port}", environment, lines, printed)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([agent_memory_command(), "token", *args], env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _refused(answer: httpx.Response, status: int, reason: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["details"]["reason"] == reason


def test_the_console_prints_a_one_time_code_that_signs_in_once_and_never_a_token(tmp_path: Path) -> None:
    with console(tmp_path) as running:
        code = running.next_code()
        signed_in = running.exchange(code)
        assert signed_in.status_code == 200 and signed_in.headers["cache-control"] == "no-store"
        session = signed_in.json()
        who = running.whoami(session["token"])
        assert who.status_code == 200
        assert (who.json()["operator"], who.json()["agent_id"], who.json()["jti"]) == (True, "launcher",
                                                                                         session["token_id"])
        assert who.json()["exp"] - who.json()["iat"] == 12 * 3600

        _refused(running.exchange(code), 401, "invalid_code")  # never valid twice
        _refused(running.exchange("not-a-code-this-console-made"), 401, "invalid_code")
        _refused(httpx.post(f"{running.base}/console/api/session", content=b"[]", timeout=30), 400, "no_code")
        assert httpx.post(f"{running.base}/mcp", json={}, timeout=30,
                          headers={"Authorization": f"Bearer {session['token']}"}).status_code == 401

        assert running.proc.stdin is not None
        running.proc.stdin.write("\n")  # Enter: a new sign-in URL with a new code
        running.proc.stdin.flush()
        fresh = running.next_code()
        assert fresh != code and running.exchange(fresh).status_code == 200

        recorded = [json.loads(line) for line in _cli(running.env, "list").splitlines()]
        mine = next(row for row in recorded if row["id"] == session["token_id"])
        assert (mine["kind"], mine["agent_id"], mine["operator"], mine["revoked_at"]) == ("console", "launcher",
                                                                                         True, None)
        _cli(running.env, "revoke", session["token_id"])
        gone = running.whoami(session["token"])
        assert gone.status_code == 401 and "token revoked" in gone.json()["message"]
    for output in ("".join(running.printed), (tmp_path / "console.log").read_text()):
        assert "am1." not in output and "token=" not in output


def test_a_sign_in_code_expires_after_console_code_seconds(tmp_path: Path) -> None:
    with console(tmp_path, "--console-code-seconds", "1") as running:
        code = running.next_code()
        time.sleep(1.5)
        _refused(running.exchange(code), 401, "invalid_code")


def test_console_open_hands_the_browser_a_private_redirect_file_and_no_code_or_token(tmp_path: Path) -> None:
    argv_file = tmp_path / "browser-argv"
    browser = tmp_path / "browser"
    browser.write_text(  # records its command line, as /proc/PID/cmdline shows it to anyone on the machine
        f"#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\" > {argv_file}.part && mv {argv_file}.part {argv_file}\n")
    browser.chmod(0o700)
    with console(tmp_path, "--open", BROWSER=str(browser)) as running:
        code = running.next_code()
        deadline = time.monotonic() + 30
        while not argv_file.exists():
            assert time.monotonic() < deadline, "the browser was not started within 30 s"
            time.sleep(0.05)
        argv = argv_file.read_text().splitlines()
        assert len(argv) == 2 and argv[1].startswith("file://")
        assert code not in argv[1] and "code=" not in argv[1] and "am1." not in argv[1]
        page = Path(argv[1].removeprefix("file://"))
        assert page.parent == tmp_path / "data" and stat.S_IMODE(os.stat(page).st_mode) == 0o600
        assert f"http://127.0.0.1:{running.base.rsplit(':', 1)[1]}/console/#code={code}" in page.read_text()
        assert running.exchange(code).status_code == 200
    assert not page.exists()  # removed when the console stops (else once the code has expired)


def test_a_shared_server_makes_no_sign_in_codes_so_it_refuses_every_one(tmp_path: Path) -> None:
    with http_server(tmp_path / "data", MEMORY_VECTOR_BACKEND="none") as url:
        answer = httpx.post(url.replace("/mcp", "/console/api/session"), json={"code": "a" * 43}, timeout=30)
    _refused(answer, 401, "invalid_code")
