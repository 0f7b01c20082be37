"""The vector index is derived: writes never wait for it, and it catches up when it comes back.
Uses a real Chroma server (`chroma run`) through `MEMORY_CHROMA_HOST`."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client

from agent_memory.tools.server import create_server
from tests.conftest import Agent, make_settings
from tests.e2e.servers import free_port, running
from tests.tools.test_retrieve import retrieve, semantic_until

pytestmark = pytest.mark.anyio


@contextmanager
def chroma_server(path: Path, port: int) -> Iterator[None]:
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    assert chroma, "the chroma command (installed with chromadb) is missing"
    with running([chroma, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)], port,
                 path.parent / "chroma.log"):
        yield


async def test_writes_succeed_while_the_index_is_down_and_it_catches_up(tmp_path: Path) -> None:
    port = free_port()
    settings = make_settings(tmp_path / "data", vector_backend="chroma", chroma_host="127.0.0.1",
                             chroma_port=port)
    async with Client(create_server(settings)) as client:
        agent = Agent(client)
        kept = await agent.create("The lighthouse keeper logs every ship at dawn.")
        gone = await agent.create("The harbour master retired to the mountains.")
        failed, _ = await agent.crud(action="delete", items=[{"id": gone["id"]}])
        assert not failed
        failed, data = await retrieve(agent, query="who records the boats each morning?")
        assert not failed and data["degraded"]  # index unreachable: keyword-only, and says so
        with chroma_server(tmp_path / "chroma", port):
            data = await semantic_until(agent, "who records the boats each morning?", timeout=90, limit=5)
            ids = [i["id"] for i in data["items"]]
            assert ids[0] == kept["id"] and gone["id"] not in ids
            late = await agent.create("Fog horns sound every thirty seconds in poor visibility.")
            await semantic_until(agent, "warning sounds when it is misty", lambda d: d["items"][0]["id"] == late["id"])


async def outbox_drained(client: Client, timeout: float = 60) -> None:
    """Wait until the vector outbox is empty: every change is in the index, none still queued."""
    with anyio.fail_after(timeout):
        while json.loads((await client.read_resource("memory://stats")).contents[0].text)["vector_outbox_backlog"]:
            await anyio.sleep(0.05)


async def test_a_damaged_vector_directory_is_rebuilt_from_sqlite(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", vector_backend="chroma")
    async with Client(create_server(settings)) as client:
        agent = Agent(client)
        entry = await agent.create("Glaciers carve valleys over thousands of years.")
        await semantic_until(agent, "how were the valleys shaped by ice?")
        # Found by meaning is not yet indexed (a retrieve embeds entries still queued itself): had
        # the server stopped with the entry still queued, the truncated index below would lose
        # nothing the queue does not restore, and no repair would be due.
        await outbox_drained(client)
    for path in (tmp_path / "data" / "chroma").rglob("*"):
        if path.is_file():
            path.write_bytes(b"")  # truncate every index file
    old_copy = tmp_path / "data" / "chroma.broken-1700000000"  # set aside by an earlier repair
    old_copy.mkdir()
    (old_copy / "chroma.sqlite3").write_bytes(b"\0" * 4096)
    async with Client(create_server(settings)) as client:
        agent = Agent(client)
        failed, data = await retrieve(agent, query="glaciers valleys")
        assert not failed and [i["id"] for i in data["items"]] == [entry["id"]]  # keywords answer meanwhile
        data = await semantic_until(agent, "how were the valleys shaped by ice?", timeout=90)
        assert data["items"][0]["id"] == entry["id"]
        # Once the rebuild has caught up, no set-aside copy is kept (they only take space).
        assert not list((tmp_path / "data").glob("chroma.broken-*"))


def forget_vectors(chroma_dir: Path, scope: str, namespace: str, ids: list[str]) -> None:
    """Vectors vanish from the directory, as when a second process wrote to it (STACK.md)."""
    import chromadb
    from chromadb.api.client import SharedSystemClient
    from chromadb.config import Settings

    from agent_memory.storage.chroma.chroma_index import collection_name

    client = chromadb.PersistentClient(path=str(chroma_dir), settings=Settings(anonymized_telemetry=False))
    try:
        collection = client.get_collection(collection_name(scope, namespace), embedding_function=None)
        collection.delete(ids=ids)
        assert collection.count() == 0
    finally:
        SharedSystemClient.clear_system_cache()


async def test_vectors_lost_from_one_namespace_are_rebuilt_while_changes_to_another_are_queued(
        tmp_path: Path) -> None:
    # "Found by meaning" must mean "in the index": no in-call embedding of queued entries.
    settings = make_settings(tmp_path / "data", vector_backend="chroma", retrieval_inline_embed_max=0)
    async with Client(create_server(settings)) as client:
        agent = Agent(client)
        lost = [(await agent.create(text))["id"] for text in (
            "Glaciers carve valleys over thousands of years.", "Ice sheets scraped the bedrock bare.")]
        errands = [await agent.create(f"Shopping list {n}: bread and eggs.", namespace="alice/errands")
                   for n in range(4)]
        await outbox_drained(client)
    forget_vectors(tmp_path / "data" / "chroma", "agent", "alice", lost)
    # More changes queued than vectors lost, none of them for the lost ones: edits in another
    # namespace, with no server applying them.
    async with Client(create_server(make_settings(tmp_path / "data", vector_backend="none"))) as client:
        failed, data = await Agent(client).crud(action="update", namespace="alice/errands", items=[
            {"id": e["id"], "content": e["content"] + " And coffee."} for e in errands])
        assert not failed, data
    async with Client(create_server(settings)) as client:
        data = await semantic_until(Agent(client), "how were the valleys shaped by ice?",
                                    lambda d: set(lost) <= {i["id"] for i in d["items"]}, timeout=60)
        assert not data["degraded"]
