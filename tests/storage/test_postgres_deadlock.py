"""Two PostgreSQL writers that lock the same rows in opposite orders: PostgreSQL stops one as a
deadlock's victim, and `PostgresDatabase.transact` runs it again, so both finish (seen in the fuzz
test: background pruning deleting a namespace's oldest entries while reflection wrote to them)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import AsyncIterator

import anyio
import pytest

pytestmark = pytest.mark.anyio
psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from agent_memory.storage.postgres.database import RETRIES, PostgresDatabase  # noqa: E402 - after the driver check


@pytest.fixture
async def db(postgres_url: str) -> AsyncIterator[PostgresDatabase]:
    database = PostgresDatabase(postgres_url, pool_size=4)
    await database.open()
    try:
        await database.transact(lambda conn: conn.execute(
            "CREATE TABLE locks_test (id int PRIMARY KEY, v int NOT NULL); "
            "INSERT INTO locks_test VALUES (1, 0), (2, 0)"))
        yield database
    finally:
        await database.close()


async def test_a_deadlock_victim_is_run_again_and_both_writers_finish(db: PostgresDatabase) -> None:
    holding = {"a": threading.Event(), "b": threading.Event()}
    attempts: Counter[str] = Counter()

    def writer(name: str, first: int, second: int, other: str):  # noqa: ANN202 - a transaction body
        def work(conn: psycopg.Connection) -> None:
            attempts[name] += 1
            conn.execute("SET LOCAL deadlock_timeout = '100ms'")
            conn.execute("UPDATE locks_test SET v = v + 1 WHERE id = %s", (first,))
            if attempts[name] == 1:  # the first time, wait until the other holds its first row
                holding[name].set()
                holding[other].wait(10)
            conn.execute("UPDATE locks_test SET v = v + 1 WHERE id = %s", (second,))
        return work

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(db.transact, writer("a", 1, 2, "b"))
            group.start_soon(db.transact, writer("b", 2, 1, "a"))
    rows = await db.read(lambda conn: conn.execute("SELECT id, v FROM locks_test ORDER BY id").fetchall())
    assert [tuple(r) for r in rows] == [(1, 2), (2, 2)]  # each writer's two updates, once
    assert sorted(attempts.values()) == [1, 2]  # the victim ran again, once


async def test_a_deadlock_that_keeps_coming_back_is_raised(db: PostgresDatabase) -> None:
    runs = []

    def work(conn: psycopg.Connection) -> None:
        runs.append(1)
        raise psycopg.errors.DeadlockDetected("deadlock detected")

    with pytest.raises(psycopg.errors.DeadlockDetected):
        await db.transact(work)
    assert len(runs) == RETRIES + 1
