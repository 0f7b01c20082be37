"""Links to real agent-memory servers for the framework integrations: in-process (the real server
and storage in tmp_path), a `agent-memory serve` subprocess on stdio, and one over HTTP."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_memory.integrations.mcp_link import MemoryLink
from agent_memory.tools.server import create_server
from tests.conftest import identity, make_settings
from tests.e2e.servers import agent_memory_command, server_env

ALICE = identity("alice", "sys1", "red")
BOB = identity("bob", "sys3", "red")
CAROL = identity("carol", "sys3", "red")


class RecordingLink(MemoryLink):
    """A real link that also records every tool call it sends (to check bulk splitting)."""

    calls: list[tuple[str, dict[str, Any]]]

    def call_sync(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((tool, dict(arguments)))
        return super().call_sync(tool, arguments)


@pytest.fixture
def in_process(tmp_path: Path) -> Iterator[Callable[[dict], RecordingLink]]:
    """Links to one in-process server (keyword retrieval only: no model load), one per identity."""
    server = create_server(make_settings(tmp_path / "data"))
    links: list[MemoryLink] = []

    def connect(ident: dict) -> RecordingLink:
        link = RecordingLink(server, agent_id=ident["agent_id"], team=ident["team"], identity=ident)
        link.calls = []
        links.append(link)
        return link

    yield connect
    for link in links:
        link.close_sync()


@pytest.fixture
def stdio_link(tmp_path: Path) -> Iterator[Callable[[dict], MemoryLink]]:
    """Links that launch `agent-memory serve` on stdio (with the real embedding model)."""
    links: list[MemoryLink] = []

    def launch(ident: dict) -> MemoryLink:
        link = MemoryLink.stdio(ident, command=agent_memory_command(), env=server_env(tmp_path / "data"))
        links.append(link)
        return link

    yield launch
    for link in links:
        link.close_sync()


async def wait_semantic(link: MemoryLink) -> None:
    """Wait (bounded) until the server's embedding model is loaded (with entries stored, a
    retrieve says `degraded` until then)."""
    with anyio.fail_after(60):
        while (await link.call("memory_retrieve", {"query": "warm up", "min_score": 0}))["degraded"] is not None:
            await anyio.sleep(0.1)
