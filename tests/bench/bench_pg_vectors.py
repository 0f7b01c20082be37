"""pgvector semantic search (`PgVectorRuntime`): indexing rate and search latency.

Starts a throwaway PostgreSQL 16 + pgvector (the `pgserver` binaries, as tests/postgres.py does;
durable: fsync and synchronous commit on, as in production), then:
  1. indexing: `--n` entries written through the repository, applied by one runtime with the real
     packaged model (entries/s end to end, and the model alone on the same texts), then again by
     two runtimes (two "servers") at once after a `rebuild`;
  2. search at `--vectors` entries spread over 100 partitions (synthetic clustered unit vectors,
     inserted straight into entry_vectors through the HNSW index): the exact plan and the HNSW
     plan, over 1, 10 and all 100 partitions, limit 100 (retrieval's default candidate depth);
     what `nearest` picks; HNSW's recall against the exact answer; `runtime.nearest` end to end
     (query embedding included).

    .venv/bin/python tests/bench/bench_pg_vectors.py [--n 400] [--vectors 10000]

Measured on 2 cores shared with other work (load 1-3, so figures vary up to 2x between runs):
indexing 90-115 entries/s by one server (the model alone: 110-195 texts/s; the database's part,
HNSW insertion mostly, 10-40%), about the same by two servers on the same 2 cores. Search at 10,000
vectors, limit 100, database part: one partition of 100 exact 0.7 ms (HNSW would find 32 of 100);
10 partitions (1,000) exact 1.7 ms; all 100 partitions HNSW (ef_search 200, recall 0.99) 5.4 ms
incl. 2.7 ms counting, vs 10 ms exact. `runtime.nearest` end to end (query embedded): 7.5 ms and
20 ms median.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import psycopg  # noqa: E402

from agent_memory.core.model.models import Scope  # noqa: E402
from agent_memory.core.ports import Partition  # noqa: E402
from agent_memory.storage.embedding.embedder import OnnxEmbedder, default_model_files  # noqa: E402
from agent_memory.storage.postgres import vectors_search  # noqa: E402
from agent_memory.storage.postgres.database import PostgresDatabase  # noqa: E402
from agent_memory.storage.postgres.entries import PostgresEntryRepository  # noqa: E402
from agent_memory.storage.postgres.migrations import migrate  # noqa: E402
from agent_memory.storage.postgres.rows import INSERT_ENTRY, entry_params  # noqa: E402
from agent_memory.storage.postgres.vectors import PgVectorRuntime  # noqa: E402
from agent_memory.storage.postgres.vectors_outbox import vector_text  # noqa: E402
from tests.postgres import LocalPostgres, pgserver_bin_dir  # noqa: E402
from tests.storage.stores import stored  # noqa: E402

WORDS = ("deploy staging cache build queue worker database index migration review lunch friday release "
         "customer invoice budget token rotation backup restore latency alert oncall runbook schema").split()
LIMIT = 100
PARTITIONS = 100


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 40))).capitalize() + "."


def ms(samples: list[float]) -> str:
    p95 = sorted(samples)[int(len(samples) * .95)]
    return f"median {statistics.median(samples) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"


async def indexing(db: PostgresDatabase, url: str, n: int) -> None:
    rng = random.Random(1)
    repo = PostgresEntryRepository(db)
    entries = [stored(Scope.TEAM, f"t{i % 10}", team=f"t{i % 10}", content=sentence(rng)) for i in range(n)]

    def work(tx):  # noqa: ANN001, ANN202
        for entry in entries:
            tx.insert(entry)
            tx.enqueue_vector(entry, "upsert")

    await repo.transact(work)
    runtime = PgVectorRuntime(db, default_model_files)
    assert await runtime.take_over()
    started = time.perf_counter()
    while await runtime.apply_pending() > 0:
        pass
    took = time.perf_counter() - started
    print(f"indexing, one server:  {n} entries in {took:.1f} s = {n / took:.0f} entries/s")
    model = OnnxEmbedder(default_model_files(), threads=2)
    texts = [e.content for e in entries]
    started = time.perf_counter()
    for chunk in range(0, n, 64):
        model.embed_array(texts[chunk:chunk + 64])
    alone = time.perf_counter() - started
    print(f"  the model alone (2 threads, batches of 64): {n / alone:.0f} texts/s "
          f"(database share of the applier: {max(0.0, 1 - alone / took):.0%})")

    await runtime.rebuild()
    other_db = PostgresDatabase(url, pool_size=4)
    await other_db.open()
    other = PgVectorRuntime(other_db, default_model_files)
    assert await other.take_over()

    async def drain(vectors: PgVectorRuntime) -> None:
        while await vectors.apply_pending() > 0:
            pass

    runtime.applied = 0
    started = time.perf_counter()
    await asyncio.gather(drain(runtime), drain(other))
    took = time.perf_counter() - started
    print(f"indexing, two servers: {n} entries in {took:.1f} s = {n / took:.0f} entries/s "
          f"(split {runtime.applied}/{other.applied}; one machine, 2 cores)")
    await other.aclose()
    await other_db.close()
    await runtime.aclose()


def synthetic(conn: psycopg.Connection, count: int, rng: np.random.Generator) -> np.ndarray:
    centers = rng.normal(size=(200, 384)).astype(np.float32)
    vectors = centers[rng.integers(0, 200, count)] + 0.6 * rng.normal(size=(count, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    conn.execute("DELETE FROM vector_outbox")
    entries = [stored(Scope.TEAM, f"p{i % PARTITIONS}", team=f"p{i % PARTITIONS}", content=f"synthetic {i}")
               for i in range(count)]
    started = time.perf_counter()
    with conn.transaction():
        conn.cursor().executemany(INSERT_ENTRY, [entry_params(e) for e in entries])
    took_entries = time.perf_counter() - started
    started = time.perf_counter()
    with conn.transaction():
        conn.cursor().executemany(
            "INSERT INTO entry_vectors (entry_id, scope, namespace, embedding) VALUES (%s, %s, %s, %s::vector)",
            [(e.id, "team", e.namespace, vector_text(v)) for e, v in zip(entries, vectors, strict=True)])
    took = time.perf_counter() - started
    conn.execute("VACUUM ANALYZE entry_vectors")  # as autovacuum would: index-only counts
    print(f"search set: {count} vectors in {PARTITIONS} partitions; entries {took_entries:.1f} s, vectors through "
          f"the HNSW index {took:.1f} s ({count / took:.0f}/s)")
    return centers


def timed(conn: psycopg.Connection, queries: list[str], fn) -> tuple[list[float], list[list[str]]]:  # noqa: ANN001
    samples, answers = [], []
    for query in queries:
        started = time.perf_counter()
        with conn.transaction():
            found = fn(conn, query)
        samples.append(time.perf_counter() - started)
        answers.append([entry_id for entry_id, _ in found])
    return samples, answers


def searching(url: str, count: int) -> None:
    rng = np.random.default_rng(7)
    with psycopg.connect(url, autocommit=True) as conn:
        centers = synthetic(conn, count, rng)
        total = count
        queries = []
        for center in centers[rng.integers(0, len(centers), 40)]:
            q = center + 0.6 * rng.normal(size=384).astype(np.float32)
            queries.append(vector_text(q / np.linalg.norm(q)))
        for n_parts in (1, 10, PARTITIONS):
            parts = [Partition("team", f"p{i}") for i in range(n_parts)]
            in_parts = total * n_parts // PARTITIONS
            exact_t, exact_a = timed(conn, queries, lambda c, q, p=parts: vectors_search.exact(c, q, p, LIMIT))
            ef = min(1000, max(40, int(2 * LIMIT * total / in_parts)))
            hnsw_t, hnsw_a = timed(conn, queries,
                                   lambda c, q, p=parts, e=ef: vectors_search.approximate(c, q, p, LIMIT, e))
            chosen_t, _ = timed(conn, queries, lambda c, q, p=parts: vectors_search.nearest(c, q, p, LIMIT))
            count_t, _ = timed(conn, queries, lambda c, q, p=parts: [("", vectors_search.count_in(c, p))])
            recall = statistics.mean(len(set(a) & set(b)) / max(1, len(b))
                                     for a, b in zip(hnsw_a, exact_a, strict=True))
            short = statistics.mean(len(a) for a in hnsw_a)
            picked = "HNSW" if vectors_search.plan(in_parts, total, LIMIT) is not None else "exact"
            print(f"{n_parts:>3} partitions ({in_parts} vectors), limit {LIMIT}:\n"
                  f"    exact: {ms(exact_t)}\n"
                  f"    HNSW (ef_search {ef}): {ms(hnsw_t)}, {short:.0f} hits, recall@{LIMIT} {recall:.2f}\n"
                  f"    nearest() picks {picked}: {ms(chosen_t)} (of which counting the partitions: {ms(count_t)})")


async def end_to_end(url: str) -> None:
    db = PostgresDatabase(url, pool_size=4)
    await db.open()
    runtime = PgVectorRuntime(db, default_model_files)
    assert await runtime.take_over()
    for n_parts in (1, PARTITIONS):
        parts = [Partition("team", f"p{i}") for i in range(n_parts)]
        samples = []
        for i in range(20):
            started = time.perf_counter()
            await runtime.nearest(f"who restores the {WORDS[i]} backup after an alert", parts, LIMIT)
            samples.append(time.perf_counter() - started)
        print(f"runtime.nearest end to end (embedding the query included), {n_parts} partitions: {ms(samples)}")
    await runtime.aclose()
    await db.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=400, help="entries to index with the real model")
    parser.add_argument("--vectors", type=int, default=10_000, help="vectors for the search timings (0: none)")
    args = parser.parse_args()
    bin_dir = pgserver_bin_dir()
    if bin_dir is None:
        sys.exit("needs the pgserver wheel (the test extra)")
    server = LocalPostgres(bin_dir, durable=True)
    server.start()
    try:
        with psycopg.connect(server.url(), autocommit=True) as admin:
            admin.execute("CREATE DATABASE bench")
        url = server.url("bench")
        db = PostgresDatabase(url, pool_size=6)
        await db.open()
        await migrate(db)
        await indexing(db, url, args.n)
        await db.close()
        if args.vectors:
            await asyncio.to_thread(searching, url, args.vectors)
            await end_to_end(url)
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main())
