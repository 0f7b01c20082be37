"""Which PostgreSQL driver for the record store: asyncpg or psycopg 3 (sync in a worker thread, and async).

Starts a throwaway PostgreSQL 16 (the `pgserver` binaries, as tests/postgres.py does; durable by
default: fsync and synchronous commit on, as in production) and times, per driver:
  - get: a single-row SELECT by primary key (one round trip),
  - write: a short write transaction (BEGIN, INSERT entry, INSERT audit row, INSERT outbox row, COMMIT),
  - 8 clients doing get+write pairs at once (each with a connection of its own from a pool of 8).
psycopg "sync-thread" runs each unit as one synchronous function on a worker thread, as the store's
write ports do (`EntryRepository.transact(work)` runs a synchronous callback); the others are async.

    .venv/bin/python tests/bench/bench_pg_driver.py [--n 1000] [--no-durable]

Needs the test extra (pgserver, psycopg) and, for its first column, `pip install asyncpg` (not a
dependency of agent-memory).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.postgres import LocalPostgres, pgserver_bin_dir  # noqa: E402

CLIENTS = 8
SCHEMA = """
CREATE TABLE entries (id TEXT PRIMARY KEY, namespace TEXT NOT NULL, content TEXT NOT NULL,
                      created_at TEXT NOT NULL, version INTEGER NOT NULL, etag TEXT NOT NULL);
CREATE TABLE audit (seq BIGSERIAL PRIMARY KEY, at TEXT NOT NULL, agent_id TEXT NOT NULL, action TEXT NOT NULL,
                    entry_id TEXT, details TEXT NOT NULL);
CREATE TABLE vector_outbox (seq BIGSERIAL PRIMARY KEY, entry_id TEXT NOT NULL, op TEXT NOT NULL,
                            enqueued_at TEXT NOT NULL);
"""
NOW = "2026-01-01T00:00:00.000Z"


def _row() -> tuple[str, str, str, str, int, str]:
    return (uuid.uuid4().hex, "alice", "a short fact about the build cache", NOW, 1, uuid.uuid4().hex)


async def _time(n: int, unit: Callable[[int], Awaitable[None]]) -> list[float]:
    took = []
    for i in range(n):
        start = time.perf_counter()
        await unit(i)
        took.append(time.perf_counter() - start)
    return took


async def _concurrent(n: int, unit: Callable[[int], Awaitable[None]]) -> tuple[float, list[float]]:
    per_client = n // CLIENTS
    start = time.perf_counter()
    results = await asyncio.gather(*(_time(per_client, unit) for _ in range(CLIENTS)))
    return time.perf_counter() - start, [t for r in results for t in r]


def _report(driver: str, name: str, took: list[float], wall: float | None = None) -> None:
    took = sorted(took)
    p50, p99 = took[len(took) // 2] * 1e3, took[int(len(took) * 0.99)] * 1e3
    rate = len(took) / (wall if wall is not None else sum(took))
    print(f"{driver:<20} {name:<22} n={len(took):<6} p50 {p50:7.3f} ms  p99 {p99:7.3f} ms  {rate:9.0f}/s  "
          f"mean {statistics.fmean(took) * 1e3:7.3f} ms")


async def bench_asyncpg(url: str, n: int, ids: list[str]) -> None:
    import asyncpg

    pool = await asyncpg.create_pool(url, min_size=CLIENTS, max_size=CLIENTS)

    async def get(i: int) -> None:
        async with pool.acquire() as conn:
            await conn.fetchrow("SELECT id, content, version, etag FROM entries WHERE id = $1", ids[i % len(ids)])

    async def write(i: int) -> None:
        row = _row()
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute("INSERT INTO entries VALUES ($1, $2, $3, $4, $5, $6)", *row)
            await conn.execute("INSERT INTO audit (at, agent_id, action, entry_id, details) "
                               "VALUES ($1, 'alice', 'create', $2, '{}')", NOW, row[0])
            await conn.execute("INSERT INTO vector_outbox (entry_id, op, enqueued_at) VALUES ($1, 'upsert', $2)",
                               row[0], NOW)

    async def both(i: int) -> None:
        await get(i)
        await write(i)

    await _run_all("asyncpg", n, get, write, both)
    await pool.close()


async def bench_psycopg_async(url: str, n: int, ids: list[str]) -> None:
    from psycopg_pool import AsyncConnectionPool

    pool = AsyncConnectionPool(url, min_size=CLIENTS, max_size=CLIENTS, open=False)
    await pool.open(wait=True)

    async def get(i: int) -> None:
        async with pool.connection() as conn:
            await (await conn.execute("SELECT id, content, version, etag FROM entries WHERE id = %s",
                                      (ids[i % len(ids)],))).fetchone()

    async def write(i: int) -> None:
        row = _row()
        async with pool.connection() as conn, conn.transaction():
            await conn.execute("INSERT INTO entries VALUES (%s, %s, %s, %s, %s, %s)", row)
            await conn.execute("INSERT INTO audit (at, agent_id, action, entry_id, details) "
                               "VALUES (%s, 'alice', 'create', %s, '{}')", (NOW, row[0]))
            await conn.execute("INSERT INTO vector_outbox (entry_id, op, enqueued_at) VALUES (%s, 'upsert', %s)",
                               (row[0], NOW))

    async def both(i: int) -> None:
        await get(i)
        await write(i)

    await _run_all("psycopg async", n, get, write, both)
    await pool.close()


async def bench_psycopg_thread(url: str, n: int, ids: list[str]) -> None:
    """One synchronous function per unit on a worker thread: what `transact(work)` does."""
    from psycopg_pool import ConnectionPool

    pool = ConnectionPool(url, min_size=CLIENTS, max_size=CLIENTS, open=False)
    pool.open(wait=True)

    def get_sync(i: int) -> None:
        with pool.connection() as conn:
            conn.execute("SELECT id, content, version, etag FROM entries WHERE id = %s",
                         (ids[i % len(ids)],)).fetchone()

    def write_sync(i: int) -> None:
        row = _row()
        with pool.connection() as conn:  # commits on a clean exit (psycopg_pool's transaction block)
            conn.execute("INSERT INTO entries VALUES (%s, %s, %s, %s, %s, %s)", row)
            conn.execute("INSERT INTO audit (at, agent_id, action, entry_id, details) "
                         "VALUES (%s, 'alice', 'create', %s, '{}')", (NOW, row[0]))
            conn.execute("INSERT INTO vector_outbox (entry_id, op, enqueued_at) VALUES (%s, 'upsert', %s)",
                         (row[0], NOW))

    async def get(i: int) -> None:
        await asyncio.to_thread(get_sync, i)

    async def write(i: int) -> None:
        await asyncio.to_thread(write_sync, i)

    async def both(i: int) -> None:
        await get(i)
        await write(i)

    await _run_all("psycopg sync-thread", n, get, write, both)
    pool.close()


async def _run_all(driver: str, n: int, get: Callable[[int], Awaitable[None]],
                   write: Callable[[int], Awaitable[None]], both: Callable[[int], Awaitable[None]]) -> None:
    await _time(50, get)  # warm up: connections, prepared statements
    await _time(20, write)
    _report(driver, "get by id", await _time(n, get))
    _report(driver, "write transaction", await _time(n // 2, write))
    wall, took = await _concurrent(n, both)
    _report(driver, f"{CLIENTS} clients get+write", took, wall)


def _seed(url: str, count: int) -> list[str]:
    import psycopg

    ids = []
    with psycopg.connect(url) as conn:
        conn.execute(SCHEMA)
        with conn.cursor() as cur:
            rows = [_row() for _ in range(count)]
            cur.executemany("INSERT INTO entries VALUES (%s, %s, %s, %s, %s, %s)", rows)
            ids = [r[0] for r in rows]
    return ids


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="operations per sequential measurement")
    parser.add_argument("--no-durable", action="store_true", help="fsync and synchronous commit off")
    args = parser.parse_args()
    bin_dir = pgserver_bin_dir()
    if bin_dir is None:
        sys.exit("pgserver is not installed (pip install -e '.[test]')")
    server = LocalPostgres(bin_dir, durable=not args.no_durable)
    server.start()
    try:
        print(f"PostgreSQL 16 (pgserver), Unix socket, durable={not args.no_durable}, n={args.n}, "
              f"{CLIENTS} clients, Python {sys.version.split()[0]}")
        import psycopg

        for bench in (bench_asyncpg, bench_psycopg_async, bench_psycopg_thread):
            name = bench.__name__.removeprefix("bench_")
            if name == "asyncpg" and importlib.util.find_spec("asyncpg") is None:
                print("asyncpg: not installed (only this benchmark uses it: pip install asyncpg)")
                continue
            with psycopg.connect(server.url(), autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {name}")
            url = server.url(name)
            ids = _seed(url, 10_000)
            await bench(url, args.n, ids)
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main())
