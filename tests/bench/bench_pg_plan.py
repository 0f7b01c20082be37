"""Where a PostgreSQL semantic search spends its time on a large store, piece by piece: N entries
(default 100,000) in one team namespace with random vectors (inserted by SQL, the HNSW index built
afterwards), then each query of the hybrid path timed on its own (p50 and min of 20). Shows what
counting the partitions costs against the HNSW walk, and what `PartitionSizes` saves.

    .venv/bin/python tests/bench/bench_pg_plan.py [N]
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: its tests package
from agent_memory.config import load_settings  # noqa: E402
from agent_memory.core.access.visibility import readable_areas  # noqa: E402
from agent_memory.core.model.models import Caller, SystemType  # noqa: E402
from agent_memory.core.ports import CandidateFilter, Partition  # noqa: E402
from agent_memory.storage.postgres import vectors_search  # noqa: E402
from agent_memory.stores import open_store  # noqa: E402
from tests.bench.pg_bench import bench_postgres  # noqa: E402

STAMP = "to_char(timestamp '2026-01-01' + g * interval '1 second', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
ENTRIES = (
    "INSERT INTO entries (id, scope, namespace, team, owner_agent_id, content, tags, priority, source, confidence, "
    "layer, created_at, updated_at, version, etag) SELECT 'e' || g, 'team', 'red/bench', 'red', 'a', "
    "'memory number ' || g || ' about topic ' || (g %% 977), '{}', 'medium', 'manual', 0.9, 'long_term', "
    f"{STAMP}, {STAMP}, 1, 'x' || g FROM generate_series(1, %s) g"
)
VECTORS = (
    "INSERT INTO entry_vectors (entry_id, scope, namespace, embedding) SELECT 'e' || g, 'team', 'red/bench', "
    "(SELECT array_agg(random() - 0.5) FROM generate_series(1, 384) d WHERE g > 0)::vector "
    "FROM generate_series(1, %s) g"
)
QUEUED = ("INSERT INTO vector_outbox (entry_id, op, scope, namespace, enqueued_at) "
          "SELECT id, 'upsert', scope, namespace, created_at FROM entries ORDER BY seq")
DRAIN = "DELETE FROM vector_outbox WHERE seq IN (SELECT seq FROM vector_outbox ORDER BY seq LIMIT 500)"
HNSW = "CREATE INDEX entry_vectors_nearest ON entry_vectors USING hnsw (embedding vector_cosine_ops)"


async def timed(label: str, run: Callable[[], Awaitable[Any]], n: int = 20) -> None:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await run()
        times.append((time.perf_counter() - started) * 1000)
    print(f"  {label:38s} p50 {statistics.median(times):7.2f} ms   min {min(times):7.2f} ms", flush=True)


async def main(url: str, data_dir: str, n: int) -> None:
    settings = load_settings(environ={}, overrides={"backend": "postgres", "postgres_url": url, "data_dir": data_dir,
                                                    "vector_backend": "none"})
    async with open_store(settings) as store:
        db = store.db  # type: ignore[attr-defined]

        def fill(conn: Any) -> None:
            conn.execute(ENTRIES, (n,))
            conn.execute(QUEUED)
            conn.execute("DROP INDEX entry_vectors_nearest")  # built once afterwards: much faster
            conn.execute(VECTORS, (n,))

        started = time.perf_counter()
        await db.transact(fill)
        await db.read(lambda c: (c.execute("SET maintenance_work_mem = '512MB'"), c.execute(HNSW)))
        await db.read(lambda c: c.execute("ANALYZE"))
        print(f"{n:,} entries with vectors in one partition, loaded in {time.perf_counter() - started:.0f} s")
        retrieval = store.retrieval_store()
        areas = readable_areas(Caller(agent_id="a", system_type=SystemType.SYS1, team="red"), ())
        filters = CandidateFilter(now="2027-01-01T00:00:00.000Z")
        await timed(f"partitions_and_pending, {n:,} queued",
                    lambda: retrieval.partitions_and_pending(areas, (), filters, 64), n=5)
        for _ in range(0, n, 500):  # the outbox drained in batches, as the appliers do
            await db.transact(lambda c: c.execute(DRAIN))
        await timed("partitions_and_pending, drained",  # before autovacuum has seen the dead rows
                    lambda: retrieval.partitions_and_pending(areas, (), filters, 64))
        await db.read(lambda c: c.execute("VACUUM ANALYZE"))
        parts = [Partition("team", "red/bench")]
        vector = "[" + ",".join(f"{random.random() - 0.5:.4f}" for _ in range(384)) + "]"
        ids = [f"e{random.randint(1, n)}" for _ in range(100)]
        sizes = vectors_search.PartitionSizes()
        await timed("partitions_and_pending, vacuumed",
                    lambda: retrieval.partitions_and_pending(areas, (), filters, 64))
        await timed("count_in (partition size)", lambda: db.read(lambda c: vectors_search.count_in(c, parts)))
        await timed("nearest, counting each time",
                    lambda: db.read(lambda c: vectors_search.nearest(c, vector, parts, 100), snapshot=True))
        await timed("nearest, PartitionSizes",
                    lambda: db.read(lambda c: vectors_search.nearest(c, vector, parts, 100, sizes), snapshot=True))
        await timed("HNSW walk alone (ef 200)",
                    lambda: db.transact(lambda c: vectors_search.approximate(c, vector, parts, 100, 200)))
        await timed("similarities of 100 ids",
                    lambda: db.read(lambda c: vectors_search.similarities(c, vector, parts, ids)))
        await timed("visible_scored of 100 ids",
                    lambda: retrieval.visible_scored(ids, parts, areas, filters, ["topic"]))


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with bench_postgres() as pg, tempfile.TemporaryDirectory() as data:
        asyncio.run(main(pg.create_database(), data, size))
