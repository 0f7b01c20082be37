"""The socket through which processes that do not own the vector index ask the one that does."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agent_memory.core.ports import Partition, SemanticUnavailable
from agent_memory.storage.chroma.owner_link import OwnerLink, OwnerService, socket_path

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Owner:
    """Stands in for the owning runtime's search methods (records what it was asked)."""

    def __init__(self) -> None:
        self.asked: list[tuple] = []
        self.unavailable: str | None = None

    async def nearest(self, text: str, partitions: list[Partition], limit: int):
        if self.unavailable:
            raise SemanticUnavailable(self.unavailable)
        self.asked.append((text, partitions, limit))
        return [("e1", 0.9), ("e2", 0.5)], [0.1, 0.2, 0.3]

    async def similarities(self, vector: list[float], partitions: list[Partition], ids: list[str]):
        self.asked.append((vector, partitions, ids))
        return {i: 0.25 for i in ids}


def test_the_socket_sits_beside_the_index_unless_the_path_is_too_long(tmp_path: Path) -> None:
    assert socket_path(tmp_path / "chroma") == tmp_path / "chroma.sock"
    deep = tmp_path / ("d" * 120) / "chroma"
    far = socket_path(deep)
    assert len(str(far)) < 100 and far.name.startswith("agent-memory-") and far == socket_path(deep)


async def test_a_non_owner_gets_the_owners_answers(tmp_path: Path) -> None:
    owner = Owner()
    path = socket_path(tmp_path / "chroma")
    service = OwnerService(path, owner.nearest, owner.similarities)
    await service.start()
    try:
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"
        link = OwnerLink(path, "pid 1 owns it")
        parts = [Partition("agent", "a1"), Partition("team", "ops/x")]
        hits, vector = await link.nearest("owls at night", parts, 7)
        assert hits == [("e1", 0.9), ("e2", 0.5)] and vector == [0.1, 0.2, 0.3]
        assert await link.similarities([0.5], parts, ["x", "y"]) == {"x": 0.25, "y": 0.25}
        assert owner.asked == [("owls at night", parts, 7), ([0.5], parts, ["x", "y"])]
        # Concurrent questions each get their own answer.
        answers = await asyncio.gather(*(link.nearest(f"q{n}", parts, n) for n in range(1, 21)))
        assert len(answers) == 20
        # The owner's own reason for not answering reaches the asker.
        owner.unavailable = "semantic search is loading"
        with pytest.raises(SemanticUnavailable, match="loading"):
            await link.nearest("q", parts, 3)
        # Garbage on the socket gets a refusal, and the owner keeps serving.
        reader, writer = await asyncio.open_unix_connection(str(path))
        writer.write(b"{not json\n")
        await writer.drain()
        assert b"malformed" in await reader.readline()
        writer.close()
        owner.unavailable = None
        assert (await link.nearest("again", parts, 1))[0]
    finally:
        await service.aclose()
    assert not path.exists()


async def test_an_owner_that_is_gone_means_keyword_only_not_an_error(tmp_path: Path) -> None:
    path = socket_path(tmp_path / "chroma")
    link = OwnerLink(path, "another process (pid 42) owns the vector index")
    with pytest.raises(SemanticUnavailable, match="pid 42.*not answering"):
        await link.nearest("q", [Partition("agent", "a")], 3)
    # A socket left behind by a crashed owner: nobody listens on it.
    import socket

    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))
    stale.close()
    with pytest.raises(SemanticUnavailable, match="not answering"):
        await link.nearest("q", [Partition("agent", "a")], 3)
    # The next owner replaces it.
    owner = Owner()
    service = OwnerService(path, owner.nearest, owner.similarities)
    await service.start()
    try:
        assert (await link.nearest("q", [Partition("agent", "a")], 3))[0]
    finally:
        await service.aclose()
