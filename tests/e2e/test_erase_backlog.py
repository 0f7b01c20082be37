"""`agent-memory erase` on a store whose vector index is far behind (thousands of imported notes
still queued, no server running): it erases what it was asked to, vectors included, without
indexing the backlog first, on either store; and an erase killed half-way leaves nothing of what it
erased findable once the next server starts."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import INDEXED, agent_memory_command, retrieve, server_env

pytestmark = pytest.mark.anyio

BACKLOG = 3000
SECRETS = ("The staging database password rotates monthly.", "The vault unseal keys are split five ways.",
           "The backup encryption passphrase is kept in the safe.")
KEPT = "The on-call rota changes on Mondays."
ERASE = ("erase", "--scope", "team", "--namespace", "ops/secrets")


def run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([agent_memory_command(), *args], env=env, input=stdin, capture_output=True, text=True,
                          timeout=300)


async def stats(client: Client) -> dict:
    return json.loads((await client.read_resource("memory://stats")).contents[0].text)


async def indexed_store(env: dict[str, str]) -> list[str]:
    """The secrets (team ops/secrets) and a kept entry (team ops), in the vector index, with
    nothing queued; then `BACKLOG` imported notes queued for it, with no server running."""
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        made = await client.call_tool("memory_crud", {"action": "create", "scope": "team", "namespace": "ops/secrets",
                                                      "layer": "long_term", "items": [{"content": c} for c in SECRETS]})
        assert not made.is_error, made.structured_content
        kept = await client.call_tool("memory_crud", {"action": "create", "scope": "team", "namespace": "ops",
                                                      "layer": "long_term", "items": [{"content": KEPT}]})
        assert not kept.is_error, kept.structured_content
        with anyio.fail_after(90):
            while (await stats(client))["vector_outbox_backlog"]:
                await anyio.sleep(0.1)
    notes = "".join(json.dumps({"content": f"Imported note {n} about shipment {n * 7} to depot {n % 13}."}) + "\n"
                    for n in range(BACKLOG))
    imported = run(env, "import", "--from", "notes", stdin=notes)
    assert imported.returncode == 0, imported.stderr
    return [i["id"] for i in made.structured_content["items"]]


def queued(env: dict[str, str], ids: list[str] | None = None) -> int:
    """Rows in the SQLite vector outbox (of `ids` only, when given)."""
    with closing(sqlite3.connect(Path(env["MEMORY_DATA_DIR"]) / "memory.db", timeout=30)) as conn:
        if ids is None:
            return int(conn.execute("SELECT COUNT(*) FROM vector_outbox").fetchone()[0])
        marks = ", ".join("?" for _ in ids)
        return int(conn.execute(f"SELECT COUNT(*) FROM vector_outbox WHERE entry_id IN ({marks})", ids).fetchone()[0])


def stored(env: dict[str, str], ids: list[str]) -> int:
    with closing(sqlite3.connect(Path(env["MEMORY_DATA_DIR"]) / "memory.db", timeout=30)) as conn:
        marks = ", ".join("?" for _ in ids)
        return int(conn.execute(f"SELECT COUNT(*) FROM entries WHERE id IN ({marks})", ids).fetchone()[0])


def chroma_count(chroma_dir: Path, scope: str, namespace: str) -> int:
    import chromadb
    from chromadb.api.client import SharedSystemClient
    from chromadb.config import Settings

    from agent_memory.storage.chroma.chroma_index import collection_name

    client = chromadb.PersistentClient(path=str(chroma_dir), settings=Settings(anonymized_telemetry=False))
    try:
        return int(client.get_collection(collection_name(scope, namespace), embedding_function=None).count())
    finally:
        SharedSystemClient.clear_system_cache()


async def test_erase_and_its_dry_run_leave_a_large_backlog_alone(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", MEMORY_RATE_LIMIT_PER_SECOND="0", MEMORY_SYSTEM_TYPE="sys3", **INDEXED)
    secrets = await indexed_store(env)
    assert chroma_count(tmp_path / "data" / "chroma", "team", "ops/secrets") == len(SECRETS)
    assert queued(env) == BACKLOG
    dry = run(env, *ERASE, "--dry-run")
    assert dry.returncode == 0 and "would erase 3 entries" in dry.stderr, dry.stderr
    erased = run(env, *ERASE, "--yes")
    assert erased.returncode == 0, erased.stderr
    assert "erased 3 entries" in erased.stderr and "vectors removed" in erased.stderr
    # Only the erased entries' vectors went: not one of the queued notes was indexed meanwhile.
    assert (queued(env), queued(env, secrets), stored(env, secrets)) == (BACKLOG, 0, 0)
    assert chroma_count(tmp_path / "data" / "chroma", "team", "ops/secrets") == 0
    assert chroma_count(tmp_path / "data" / "chroma", "team", "ops") == 1


async def test_erase_on_postgres_leaves_a_large_backlog_alone(tmp_path: Path, postgres_url: str) -> None:
    import psycopg

    env = server_env(tmp_path / "data", MEMORY_RATE_LIMIT_PER_SECOND="0", MEMORY_SYSTEM_TYPE="sys3",
                     MEMORY_BACKEND="postgres", MEMORY_POSTGRES_URL=postgres_url, **INDEXED)
    secrets = await indexed_store(env)

    def counts() -> tuple[int, int, int]:
        with psycopg.connect(postgres_url) as pg:
            def count(sql: str, *params: object) -> int:
                return int(pg.execute(sql, params).fetchone()[0])
            return (count("SELECT count(*) FROM vector_outbox"),
                    count("SELECT count(*) FROM vector_outbox WHERE entry_id = ANY(%s)", secrets),
                    count("SELECT count(*) FROM entry_vectors WHERE entry_id = ANY(%s)", secrets))

    assert counts() == (BACKLOG, 0, len(SECRETS))
    dry = run(env, *ERASE, "--dry-run")
    assert dry.returncode == 0 and "would erase 3 entries" in dry.stderr, dry.stderr
    erased = run(env, *ERASE, "--yes")
    assert erased.returncode == 0, erased.stderr
    assert "erased 3 entries" in erased.stderr and "vectors removed" in erased.stderr
    assert counts() == (BACKLOG, 0, 0)


@contextmanager
def index_owned_by_a_hung_server(data: Path) -> Iterator[None]:
    """Holds the vector directory's owner lock, as a server that owns the index but has stopped
    answering does: an erase then waits for it to remove the vectors."""
    fd = os.open(data / "chroma.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.pwrite(fd, b"4194304", 0)
        yield
    finally:
        os.close(fd)


async def test_an_erase_killed_half_way_leaves_nothing_it_erased_findable(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", MEMORY_RATE_LIMIT_PER_SECOND="0", MEMORY_SYSTEM_TYPE="sys3", **INDEXED)
    secrets = await indexed_store(env)
    with index_owned_by_a_hung_server(tmp_path / "data"):
        erase = subprocess.Popen([agent_memory_command(), *ERASE, "--yes"], env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while stored(env, secrets):  # erased from SQLite; now waiting for the index's owner
                assert erase.poll() is None and time.monotonic() < deadline
                time.sleep(0.02)
            assert erase.poll() is None
        finally:
            erase.send_signal(signal.SIGKILL)
            erase.wait()
    before = queued(env)
    assert before >= BACKLOG and queued(env, secrets) == len(SECRETS)  # their vectors' removal is queued
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        with anyio.fail_after(90):
            while queued(env) >= before:  # the next server starts on its queue ...
                await anyio.sleep(0.02)
        # ... with the erased entries' vectors, not behind thousands of notes to index first.
        assert queued(env, secrets) == 0
        with anyio.fail_after(60):
            while (found := await retrieve(client, "secret credentials and keys", limit=50))["degraded"]:
                await anyio.sleep(0.2)
        assert not {i["id"] for i in found["items"]} & set(secrets)
        assert found["items"], "semantic search found nothing at all"
        for text in SECRETS:
            keyword = await retrieve(client, text, mode="keyword", limit=50)
            assert not {i["id"] for i in keyword["items"]} & set(secrets)
