"""A full disk, end to end: a real `agent-memory serve` over stdio with its data directory on a
small tmpfs. Writes fail with a clear structured error (INTERNAL, `details.reason` storage_full),
set-aside index copies are deleted first, everything heals once space is freed, and a stop while
the disk is full exits 0 without a traceback, counting the audit events it could not write."""

from __future__ import annotations

import errno
import json
import os
import selectors
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from tests.e2e.servers import INDEXED, agent_memory_command, server_env

TMPFS_SIZE = "24m"
GLACIERS = "Glaciers carve valleys over thousands of years."
QUESTION = "how were the valleys shaped by ice?"
OTHER_NOTES = [f"{subject} {fact}." for subject, fact in (
    ("The canteen", "serves soup on Tuesdays"), ("Deploys", "freeze on Friday afternoons"),
    ("The VPN", "needs a hardware token"), ("Invoices", "are paid within thirty days"),
    ("The cat", "sleeps on the warm printer"), ("Backups", "run nightly at two"),
    ("The lift", "is serviced every March"), ("Coffee beans", "come from a farm in Kenya"),
    ("The build", "takes eleven minutes on CI"), ("Parking", "is free after six"),
    ("The roof garden", "grows tomatoes and basil"), ("Interns", "start in September"),
    ("The red stapler", "belongs to Milton"), ("Fire drills", "happen twice a year"),
)]


@contextmanager
def small_tmpfs(path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    path.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(path)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(path: Path) -> None:
    """Write `path` until the file system is full."""
    chunk = b"\0" * 65536
    with path.open("ab", buffering=0) as out:
        try:
            while True:
                out.write(chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    with suppress(OSError), path.open("ab", buffering=0) as out:
        while True:
            out.write(b"\0" * 512)  # the last scraps too


class StdioSession:
    """Raw JSON-RPC over a server's stdin and stdout (the exit status and stderr are ours to see)."""

    def __init__(self, env: dict[str, str], stderr: Path) -> None:
        self._err = stderr.open("w")
        self.proc = subprocess.Popen([agent_memory_command(), "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._err, env=env)
        self._buffer = b""
        self._next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "disk-full-test", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})

    def _send(self, message: dict) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict, timeout: float = 60) -> dict:
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        assert self.proc.stdout
        fd = self.proc.stdout.fileno()
        selector = selectors.DefaultSelector()
        selector.register(fd, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") == self._next_id:
                    assert "result" in message, message
                    return message["result"]
            remaining = deadline - time.monotonic()
            assert remaining > 0 and selector.select(remaining), f"no answer to {method} in {timeout} s"
            chunk = os.read(fd, 65536)
            assert chunk, "the server closed stdout"
            self._buffer += chunk

    def call(self, tool: str, **arguments: object) -> tuple[bool, dict]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        return bool(result.get("isError")), result["structuredContent"]

    def create(self, content: str) -> tuple[bool, dict]:
        return self.call("memory_crud", action="create", items=[{"content": content}])

    def semantic(self, question: str, entry_id: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while True:
            failed, found = self.call("memory_retrieve", query=question, mode="semantic", limit=3, min_score=0)
            assert not failed, found
            if found["degraded"] is None and [i["id"] for i in found["items"]][:1] == [entry_id]:
                return
            assert time.monotonic() < deadline, f"semantic search did not find it: {found['degraded']} {found['items']}"
            time.sleep(0.2)

    def stop(self, timeout: float = 60) -> int:
        """Close stdin, as a host does; returns the exit status."""
        assert self.proc.stdin
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self._err.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self._err.close()


def create_until_refused(session: StdioSession, attempts: int = 200) -> dict:
    """Create entries until the store refuses one; returns that error."""
    for n in range(attempts):
        failed, data = session.create(f"Filler note {n}: " + "the quick brown fox jumps over the lazy dog. " * 80)
        if failed or data["errors"]:
            return data["errors"][0]
    raise AssertionError(f"{attempts} creates succeeded on a full disk")


def _stats(env: dict[str, str]) -> dict:
    return json.loads(subprocess.run([agent_memory_command(), "stats"], env=env, capture_output=True, text=True,
                                     timeout=60, check=True).stdout)


def test_disk_full_is_reported_clearly_heals_and_stops_cleanly(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "mnt") as mnt:
        data = mnt / "data"
        # No waiting for the model: the retrieves below poll while the repair meets the full disk.
        env = server_env(data, MEMORY_RATE_LIMIT_PER_SECOND="0", MEMORY_RETRIEVAL_LOAD_WAIT_SECONDS="0",
                         **INDEXED)
        first = StdioSession(env, tmp_path / "first.log")
        try:
            failed, made = first.create(GLACIERS)
            assert not failed, made
            glaciers = made["items"][0]["id"]
            for batch in (OTHER_NOTES[:10], OTHER_NOTES[10:]):
                failed, made = first.call("memory_crud", action="create", items=[{"content": c} for c in batch])
                assert not failed and not made["errors"], made
            first.semantic(QUESTION, glaciers)
            assert first.stop() == 0
        finally:
            first.kill()
        # At the next start the vector directory is damaged and the disk (nearly) full: the repair
        # or the new index cannot be written (which fails first depends on the bytes left).
        for path in (data / "chroma").rglob("*"):
            if path.is_file():
                path.write_bytes(b"")
        aside = data / "chroma.broken-1"  # left by an earlier repair: the first thing to go
        aside.mkdir()
        (aside / "index.bin").write_bytes(b"\1" * 64 * 1024)
        fill(mnt / "filler-1")
        os.truncate(mnt / "filler-1", (mnt / "filler-1").stat().st_size - 320 * 1024)  # room to start

        stderr = tmp_path / "stderr.log"
        session = StdioSession(env, stderr)
        try:
            deadline = time.monotonic() + 60
            while True:
                failed, found = session.call("memory_retrieve", query=QUESTION, limit=3)
                assert not failed, found
                if "storage_full" in (found["degraded"] or ""):
                    break  # keyword results meanwhile, and `degraded` says why
                assert time.monotonic() < deadline, found["degraded"]
                time.sleep(0.2)
            logged = [json.loads(line) for line in stderr.read_text().splitlines() if line.startswith("{")]
            failures = [line for line in logged if line["event"] == "vector_sync_failed"]
            assert failures[0]["level"] == "error" and failures[0]["reason"] == "storage_full", failures
            deadline = time.monotonic() + 10
            while aside.exists():
                assert time.monotonic() < deadline, "the set-aside index copy was not removed"
                time.sleep(0.1)
            fill(mnt / "filler-2")  # what the set-aside copy gave back

            error = create_until_refused(session)
            assert error["code"] == "INTERNAL" and error["details"]["reason"] == "storage_full", error
            assert "disk" in error["message"] and "full" in error["message"], error
            assert "Traceback" not in json.dumps(error) and "sqlite" not in error["message"].lower()
            assert [p["reason"] for p in _stats(env)["vector_task"]["processes"]] == ["storage_full"]
            failed, found = session.call("memory_retrieve", query="glaciers valleys", mode="keyword")
            assert not failed and found["items"], found  # reads still work

            (mnt / "filler-1").unlink()  # space freed: everything heals, no restart
            (mnt / "filler-2").unlink()
            session.semantic(QUESTION, glaciers)
            failed, late = session.create("Fog horns sound every thirty seconds in poor visibility.")
            assert not failed and not late["errors"], late
            session.semantic("what warns ships when it is misty?", late["items"][0]["id"])
            deadline = time.monotonic() + 60
            while (stats := _stats(env))["vector_outbox_backlog"] or \
                    [p["state"] for p in stats["vector_task"]["processes"]] != ["ready"]:
                assert time.monotonic() < deadline, stats
                time.sleep(0.5)
            assert stats["vector_task"]["set_aside"] == []  # the rebuild caught up: its copy went too

            fill(mnt / "filler-3")
            for _ in range(3):  # reads and a denial queue audit events that cannot be written now
                session.call("memory_retrieve", query="glaciers valleys", mode="keyword")
            failed, denied = session.call("memory_crud", action="list", scope="global", namespace="global")
            assert failed and denied["errors"][0]["code"] == "FORBIDDEN"
            status = session.stop()
        finally:
            session.kill()
        log = stderr.read_text()
        assert status == 0, log[-3000:]
        assert "Traceback" not in log and "Logging error" not in log, log[-3000:]
        lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
        lost = [line for line in lines if line["event"] == "audit_events_lost"]
        assert lost and lost[-1]["events"] >= 4 and lost[-1]["reason"] == "storage_full", lost
        assert lost[-1]["by_action_outcome"].get("list/denied") == 1, lost
        assert "Glaciers" not in log and "Filler" not in log
