"""The vector outbox: changes queued in SQLite by each write (in the write's own transaction),
read back in batches and applied to the vector index, then forgotten."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_memory.storage.chroma.chroma_index import ChromaIndex, collection_name
from agent_memory.storage.embedding.embedder import OnnxEmbedder
from agent_memory.storage.embedding.indexing_clock import IndexingClock
from agent_memory.storage.sqlite.database import Database


@dataclass(frozen=True, slots=True)
class Batch:
    seqs: list[int]
    latest: dict[str, tuple[str, str, str]]  # entry id -> (op, scope, namespace), last one wins
    live: dict[str, tuple[Any, ...]]  # entry id -> row, for entries to upsert that exist, not compacted


async def requeue_all(db: Database, space: str | None = None) -> None:
    """Queue every entry for (re)indexing: the index is derived, SQLite holds the truth. With
    `space`, record in the same transaction that the vectors to come are that model's."""
    def work(conn: Any) -> None:
        conn.execute("DELETE FROM entry_vectors")  # perhaps another model's: computed again
        conn.execute("INSERT INTO vector_outbox (entry_id, op, scope, namespace, enqueued_at) "
                     "SELECT id, 'upsert', scope, namespace, created_at FROM entries WHERE compacted = 0 "
                     "ORDER BY rowid")
        if space is not None:
            _record_model(conn, space)

    await db.transact(work)


MODEL_KEY = "embedding_model"


async def recorded_model(db: Database) -> str | None:
    """The vector space (`OnnxEmbedder.space`) the index's vectors were made in; None before any."""
    async with db.reading() as conn:
        rows = list(await conn.execute_fetchall("SELECT value FROM server_meta WHERE key = ?", (MODEL_KEY,)))
    return str(rows[0][0]) if rows else None


async def record_model(db: Database, space: str) -> None:
    await db.transact(lambda conn: _record_model(conn, space))


def _record_model(conn: Any, space: str) -> None:
    conn.execute("INSERT INTO server_meta (key, value) VALUES (?, ?) "
                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (MODEL_KEY, space))


async def backlog(db: Database) -> int:
    async with db.reading() as conn:
        rows = list(await conn.execute_fetchall("SELECT COUNT(*) FROM vector_outbox"))
    return int(rows[0][0])


async def expected_counts(db: Database) -> tuple[dict[str, int], dict[str, int]]:
    """Vectors each collection should hold according to SQLite, and how many of its entries are
    queued to be (re)indexed."""
    async with db.reading() as conn:
        expected = list(await conn.execute_fetchall(
            "SELECT scope, namespace, COUNT(*) FROM entries WHERE compacted = 0 GROUP BY 1, 2"))
        queued = list(await conn.execute_fetchall(
            "SELECT scope, namespace, COUNT(DISTINCT entry_id) FROM vector_outbox WHERE op = 'upsert' GROUP BY 1, 2"))
    return ({collection_name(s, n): int(count) for s, n, count in expected},
            {collection_name(s, n): int(count) for s, n, count in queued})


async def next_batch(db: Database, size: int, after: int | None = None) -> Batch | None:
    """The oldest `size` queued rows (after sequence number `after`, when given) and their live
    entries."""
    async with db.reading() as conn:
        rows = list(await conn.execute_fetchall(
            "SELECT seq, entry_id, op, scope, namespace FROM vector_outbox WHERE seq > ? ORDER BY seq LIMIT ?",
            (-(1 << 62) if after is None else after, size)))
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


async def queued_before(db: Database, seq: int) -> bool:
    """Is anything queued below sequence number `seq`? (A deletion queued meanwhile goes to the
    front of the outbox, below every row queued.)"""
    async with db.reading() as conn:
        rows = list(await conn.execute_fetchall("SELECT 1 FROM vector_outbox WHERE seq < ? LIMIT 1", (seq,)))
    return bool(rows)


async def next_deletions(db: Database, size: int) -> Batch | None:
    """The queued deletions (the front of the outbox, sequence numbers up to 0: see
    `SqliteWriteTransaction.enqueue_vector`), which need no model to apply."""
    async with db.reading() as conn:
        rows = list(await conn.execute_fetchall(
            "SELECT seq, entry_id, op, scope, namespace FROM vector_outbox WHERE seq <= 0 ORDER BY seq LIMIT ?",
            (size,)))
    if not rows:
        return None
    return Batch([row[0] for row in rows], {row[1]: (row[2], row[3], row[4]) for row in rows}, {})


@dataclass(frozen=True, slots=True)
class Applied:
    stored: list[tuple[str, bytes]]  # entry id -> its vector as float16 bytes
    removed: list[str]


def apply_batch(index: ChromaIndex, embedder: OnnxEmbedder | None, batch: Batch,
                clock: IndexingClock | None = None) -> Applied:
    """Synchronous: runs on the indexing thread. (A batch of deletions needs no `embedder`.)"""
    clock = clock or IndexingClock()
    vectors = None
    if batch.live:
        assert embedder is not None
        with clock.step("embed"):
            vectors = embed_batch(embedder, batch)
    return write_batch(index, batch, vectors, clock)


def embed_batch(embedder: OnnxEmbedder, batch: Batch) -> Any:
    """Synchronous: the vectors of the batch's live entries, in `batch.live`'s order."""
    return embedder.embed_array([row[3] for row in batch.live.values()])


def write_batch(index: ChromaIndex, batch: Batch, vectors: Any, clock: IndexingClock | None = None) -> Applied:
    """Synchronous, on the indexing thread: delete what the batch deletes, upsert its live entries
    with `vectors` (from `embed_batch`; None when nothing is live)."""
    clock = clock or IndexingClock()
    with clock.step("index"):
        removed = _delete(index, batch)
        rows = list(batch.live.values())
        if not rows:
            return Applied([], removed)
        _upsert(index, rows, vectors)
    halves = vectors.astype("float16")
    return Applied([(row[0], halves[p].tobytes()) for p, row in enumerate(rows)], removed)


def _delete(index: ChromaIndex, batch: Batch) -> list[str]:
    deletes: dict[str, list[str]] = {}
    for entry_id, (op, scope, namespace) in batch.latest.items():
        if op == "delete" or entry_id not in batch.live:
            deletes.setdefault(collection_name(scope, namespace), []).append(entry_id)
    for name, ids in deletes.items():
        index.delete(name, ids)
    return [i for ids in deletes.values() for i in ids]


def _upsert(index: ChromaIndex, rows: list[tuple[Any, ...]], vectors: Any) -> None:
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


async def forget(db: Database, seqs: list[int], applied: Applied) -> None:
    """Drop the applied outbox rows and keep SQLite's copy of the vectors in step, in one
    transaction (a vector is stored only while its entry still exists)."""
    def work(conn: Any) -> None:
        conn.executemany("INSERT OR REPLACE INTO entry_vectors (entry_id, vector) "
                         "SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM entries WHERE id = ?1)", applied.stored)
        conn.executemany("DELETE FROM entry_vectors WHERE entry_id = ?", [(i,) for i in applied.removed])
        marks = ", ".join("?" for _ in seqs)
        conn.execute(f"DELETE FROM vector_outbox WHERE seq IN ({marks})", seqs)

    await db.transact(work)


async def stored_vectors(db: Database, entry_ids: list[str]) -> list[tuple[str, bytes]]:
    marks = ", ".join("?" for _ in entry_ids)
    async with db.reading() as conn:
        return [(row[0], row[1]) for row in await conn.execute_fetchall(
            f"SELECT entry_id, vector FROM entry_vectors WHERE entry_id IN ({marks})", entry_ids)]


def cosine(vector: list[float], stored: list[tuple[str, bytes]]) -> dict[str, float]:
    """Cosine similarity of `vector` to float16 vectors stored as bytes."""
    if not stored:
        return {}
    import numpy as np

    query = np.asarray(vector, dtype=np.float32)
    matrix = np.frombuffer(b"".join(blob for _, blob in stored), dtype=np.float16).astype(np.float32)
    matrix = matrix.reshape(len(stored), -1)
    if matrix.shape[1] != query.shape[0]:
        return {}  # another model's vectors (reindex replaces them)
    sims = matrix @ query / np.clip(np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query)), 1e-12, None)
    return {entry_id: float(s) for (entry_id, _), s in zip(stored, sims, strict=True)}
