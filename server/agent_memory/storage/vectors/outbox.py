"""The vector outbox: changes queued in SQLite by each write (in the write's own transaction),
read back in batches and applied to the vector index, then forgotten."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.vectors.chroma_index import ChromaIndex, collection_name
from agent_memory.storage.vectors.embedder import OnnxEmbedder


@dataclass(frozen=True, slots=True)
class Batch:
    seqs: list[int]
    latest: dict[str, tuple[str, str, str]]  # entry id -> (op, scope, namespace), last one wins
    live: dict[str, tuple[Any, ...]]  # entry id -> row, for entries to upsert that exist, not compacted


async def requeue_all(db: Database) -> None:
    """Queue every entry for (re)indexing: the index is derived, SQLite holds the truth."""
    await db.transact(lambda conn: conn.execute(
        "INSERT INTO vector_outbox (entry_id, op, scope, namespace, enqueued_at) "
        "SELECT id, 'upsert', scope, namespace, created_at FROM entries WHERE compacted = 0 ORDER BY rowid"))


async def backlog(db: Database) -> int:
    async with db.reading() as conn:
        rows = list(await conn.execute_fetchall("SELECT COUNT(*) FROM vector_outbox"))
    return int(rows[0][0])


async def expected_counts(db: Database) -> tuple[dict[str, int], int]:
    """Vectors each collection should hold according to SQLite, and how many changes are queued."""
    async with db.reading() as conn:
        expected = list(await conn.execute_fetchall(
            "SELECT scope, namespace, COUNT(*) FROM entries WHERE compacted = 0 GROUP BY 1, 2"))
        pending = list(await conn.execute_fetchall("SELECT COUNT(*) FROM vector_outbox"))[0][0]
    return {collection_name(s, n): int(count) for s, n, count in expected}, int(pending)


async def next_batch(db: Database, size: int) -> Batch | None:
    async with db.reading() as conn:
        rows = list(await conn.execute_fetchall(
            "SELECT seq, entry_id, op, scope, namespace FROM vector_outbox ORDER BY seq LIMIT ?", (size,)))
        if not rows:
            return None
        latest: dict[str, tuple[str, str, str]] = {}
        for _, entry_id, op, scope, namespace in rows:
            latest[entry_id] = (op, scope, namespace)
        upsert_ids = [i for i, (op, _, _) in latest.items() if op == "upsert"]
        live: dict[str, tuple[Any, ...]] = {}
        if upsert_ids:
            marks = ", ".join("?" for _ in upsert_ids)
            for row in await conn.execute_fetchall(
                f"SELECT id, scope, namespace, content, layer, owner_agent_id, team, conflict "
                f"FROM entries WHERE id IN ({marks}) AND compacted = 0", tuple(upsert_ids)):
                live[row[0]] = row
    return Batch([row[0] for row in rows], latest, live)


def apply_batch(index: ChromaIndex, embedder: OnnxEmbedder, batch: Batch) -> None:
    """Synchronous: runs on the indexing thread."""
    deletes: dict[str, list[str]] = {}
    for entry_id, (op, scope, namespace) in batch.latest.items():
        if op == "delete" or entry_id not in batch.live:
            deletes.setdefault(collection_name(scope, namespace), []).append(entry_id)
    for name, ids in deletes.items():
        index.delete(name, ids)
    rows = list(batch.live.values())
    if not rows:
        return
    vectors = embedder.embed_array([row[3] for row in rows])
    grouped: dict[str, list[int]] = {}
    for position, row in enumerate(rows):
        grouped.setdefault(collection_name(row[1], row[2]), []).append(position)
    for name, positions in grouped.items():
        index.upsert(
            name,
            [rows[p][0] for p in positions],
            [vectors[p] for p in positions],
            [{"scope": rows[p][1], "namespace": rows[p][2], "layer": rows[p][4], "owner": rows[p][5],
              "team": rows[p][6] or "", "conflict": bool(rows[p][7])} for p in positions],
        )


async def forget(db: Database, seqs: list[int]) -> None:
    marks = ", ".join("?" for _ in seqs)
    await db.transact(lambda conn: conn.execute(f"DELETE FROM vector_outbox WHERE seq IN ({marks})", seqs))
