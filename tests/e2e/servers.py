"""Spawning real `agent-memory serve` processes for end-to-end tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from agent_memory.core.access.tokens import issue_token
from agent_memory.core.model.models import Caller, Skill, SystemType

SECRET = "e2e-test-secret-0123456789abcdef"


def agent_memory_command() -> str:
    found = shutil.which("agent-memory", path=str(Path(sys.executable).parent)) or shutil.which("agent-memory")
    assert found, "the agent-memory console script is not installed"
    return found


# For tests where "found by meaning" must mean "in the vector index": a retrieve then does not
# embed the entries still waiting for the index itself (read-your-writes), so it finds only what
# the background task has indexed.
INDEXED = {"MEMORY_RETRIEVAL_INLINE_EMBED_MAX": "0"}


def server_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update({"MEMORY_DATA_DIR": str(data_dir), "MEMORY_AGENT_ID": "launcher", "MEMORY_TEAM": "ops",
                "MEMORY_LOG_FORMAT": "json"})
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(proc: subprocess.Popen[bytes], port: int, log: Path, timeout: float = 60) -> None:
    """Wait until `proc` accepts connections on `port` (fails fast if it exits)."""
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, f"server exited: {log.read_text()}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"server did not listen on {port} in {timeout} s"
            time.sleep(0.05)


@contextmanager
def running(command: list[str], port: int, log_path: Path, env: dict[str, str] | None = None) -> Iterator[None]:
    """Run `command` (logging to `log_path`) until the block ends; it must listen on `port`."""
    log = log_path.open("w")
    proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(proc, port, log_path)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@contextmanager
def http_server(data_dir: Path, **env: str) -> Iterator[str]:
    """Run `agent-memory serve --http` on a free loopback port; yields the /mcp URL."""
    port = free_port()
    with running([agent_memory_command(), "serve", "--http", "--port", str(port)], port,
                 data_dir.parent / f"http-{port}.log", server_env(data_dir, MEMORY_AUTH_SECRET=SECRET, **env)):
        yield f"http://127.0.0.1:{port}/mcp"


def token(agent_id: str, system_type: str = "sys1", team: str = "red", skills: frozenset[Skill] | None = None,
          *, secret: str = SECRET, ttl: int = 3600, now: int | None = None) -> str:
    caller = Caller(agent_id, SystemType(system_type), team, frozenset(Skill) if skills is None else skills)
    return issue_token(caller, secret.encode(), now=int(time.time()) if now is None else now, ttl_seconds=ttl)


@asynccontextmanager
async def http_client(url: str, bearer: str, mode: str = "auto") -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


async def retrieve(client: Client, query: str, mode: str = "semantic", limit: int = 10) -> dict:
    """memory_retrieve with the relevance floors off (these tests are about what is indexed where),
    asserting it answered."""
    result = await client.call_tool("memory_retrieve", {"query": query, "mode": mode, "limit": limit,
                                                        "min_score": 0, "relative_floor": 0})
    assert not result.is_error, result.structured_content
    return result.structured_content
