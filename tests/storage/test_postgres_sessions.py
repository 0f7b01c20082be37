"""Reflection marks on PostgreSQL with several servers writing one session at once: `entries.seq`
is taken at insert, not at commit, so marks count turn numbers (storage/postgres/turn_numbers.py),
which a session's writers take one after the other. A turn committed late by another server is
never skipped; an edited turn counts as new; a deleted newest turn's number is not reused. Two
connection pools on one database stand for two servers."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from dataclasses import replace

import anyio
import pytest

from agent_memory.core.model.ids import new_entry_id, new_etag
from agent_memory.core.model.models import Entry, Layer, Priority, Scope, Source
from agent_memory.core.ports import Mark, SessionKey

pytestmark = pytest.mark.anyio
psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from agent_memory.storage.postgres.database import PostgresDatabase  # noqa: E402 - after the driver check
from agent_memory.storage.postgres.migrations import migrate  # noqa: E402
from agent_memory.storage.postgres.sessions import PostgresSessionStore  # noqa: E402

KEY = SessionKey("alice", "red", "s1")
AT = "2026-03-01T10:00:00.000Z"


def turn(content: str, session_id: str = KEY.session_id, *, created_at: str = AT) -> Entry:
    return Entry(id=new_entry_id(), scope=Scope.AGENT, namespace="alice", team="red", owner_agent_id="alice",
                 content=content, tags=("role:user",), priority=Priority.MEDIUM, source=Source.MANUAL,
                 confidence=1.0, layer=Layer.SESSION, created_at=created_at, updated_at=created_at, expires_at=None,
                 version=1, etag=new_etag(), session_id=session_id)


@pytest.fixture
async def servers(postgres_url: str) -> AsyncIterator[tuple[PostgresSessionStore, PostgresSessionStore]]:
    one, two = PostgresDatabase(postgres_url, pool_size=3), PostgresDatabase(postgres_url, pool_size=3)
    await one.open()
    await two.open()
    try:
        await migrate(one)
        yield PostgresSessionStore(one), PostgresSessionStore(two)
    finally:
        await one.close()
        await two.close()


async def reflect_once(store: PostgresSessionStore, key: SessionKey = KEY) -> list[str]:
    """What `ReflectionService.reflect` does with marks: read the new turns, move the mark past them."""
    mark = await store.reflection_mark(key)
    new = await store.session_turns(key, after=mark)
    last = max([mark.position] + [position for position, _ in new])
    assert await store.transact(lambda tx: tx.move_reflection_mark(key, mark.position, last, AT))
    return [entry.id for _, entry in new]


async def test_a_turn_committed_late_by_another_server_is_not_skipped(
        servers: tuple[PostgresSessionStore, PostgresSessionStore]) -> None:
    one, two = servers
    # The namespace's partition exists already: its first insert would make the second writer wait
    # on the partitions table's key whatever the marks count in.
    await one.transact(lambda tx: tx.insert(turn("an earlier session", "s0")))
    early, late = turn("written first, committed last"), turn("written second, committed first")
    inserted, release = threading.Event(), threading.Event()

    def slow(tx) -> None:  # noqa: ANN001 - runs on a database worker thread of server one
        tx.insert(early)
        inserted.set()
        assert release.wait(10)

    reflected: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(one.transact, slow)
        await anyio.to_thread.run_sync(inserted.wait)  # `early` holds its (smaller) seq, uncommitted
        tg.start_soon(two.transact, lambda tx: tx.insert(late))
        await anyio.sleep(0.3)  # with seq marks, `late` would commit now and a reflection would pass `early`
        reflected = await reflect_once(two)
        release.set()
    afterwards = await reflect_once(two)
    assert sorted(reflected + afterwards) == sorted([early.id, late.id])  # each turn reflected exactly once
    assert reflected == []  # the second writer waited for the first one's commit
    numbers = {entry.id: position for position, entry in await one.session_turns(KEY)}
    assert numbers == {early.id: 1, late.id: 2}  # numbers in commit order, no gaps
    assert await two.reflection_mark(KEY) == Mark(2, AT)
    assert [ref.session_id for ref in await one.sessions_to_reflect(10)] == ["s0"]


async def test_many_concurrent_writers_and_reflections_reflect_every_turn_once(
        servers: tuple[PostgresSessionStore, PostgresSessionStore]) -> None:
    one, two = servers
    written = [turn(f"turn {n}") for n in range(40)]
    seen: list[str] = []

    async def write(store: PostgresSessionStore, entries: list[Entry]) -> None:
        for entry in entries:
            await store.transact(lambda tx, e=entry: tx.insert(e))

    async def reflect(store: PostgresSessionStore) -> None:
        for _ in range(15):
            mark = await store.reflection_mark(KEY)
            new = await store.session_turns(KEY, after=mark)
            last = max([mark.position] + [position for position, _ in new])
            moved = await store.transact(lambda tx, m=mark.position, n=last: tx.move_reflection_mark(KEY, m, n, AT))
            if moved:
                seen.extend(entry.id for _, entry in new)  # only a reflection whose mark moved keeps its turns
            await anyio.sleep(0.005)

    async with anyio.create_task_group() as tg:
        tg.start_soon(write, one, written[0::2])
        tg.start_soon(write, two, written[1::2])
        tg.start_soon(reflect, one)
        tg.start_soon(reflect, two)
    seen.extend(await reflect_once(one))
    seen.extend(await reflect_once(two))
    assert sorted(seen) == sorted(e.id for e in written)  # none skipped, none twice


async def test_edited_turns_count_as_new_and_numbers_are_never_reused(
        servers: tuple[PostgresSessionStore, PostgresSessionStore]) -> None:
    one, _ = servers
    first, second = turn("first"), turn("second")
    await one.transact(lambda tx: (tx.insert(first), tx.insert(second)))
    assert await reflect_once(one) == [first.id, second.id]
    assert await one.transact(lambda tx: tx.mark_compacted([first.id])) == 1
    assert await reflect_once(one) == []  # compaction is no new turn
    edited = replace(first, content="first, corrected", updated_at="2026-03-01T11:00:00.000Z", version=2,
                     etag=new_etag(), compacted=True)
    assert await one.transact(lambda tx: tx.replace(edited, expected_etag=first.etag))
    assert await reflect_once(one) == [first.id]
    assert await one.transact(lambda tx: tx.delete(second.id, expected_etag=second.etag))
    third = turn("third")
    await one.transact(lambda tx: tx.insert(third))
    assert await one.sessions_to_reflect(10) != []
    assert await reflect_once(one) == [third.id]  # numbered 4, past the mark (3), though 2 was deleted
    assert [p for p, _ in await one.session_turns(KEY)] == [3, 4]


async def test_imported_turns_move_the_mark_by_turn_number(
        servers: tuple[PostgresSessionStore, PostgresSessionStore]) -> None:
    one, _ = servers
    live, imported, other = turn("live"), turn("imported"), turn("elsewhere", "s2")
    await one.transact(lambda tx: tx.insert(live))
    await one.transact(lambda tx: (tx.insert(imported), tx.insert(other),
                                   tx.mark_reflected([imported.id, other.id], AT)))
    assert await one.reflection_mark(KEY) == Mark(2, AT)
    assert await one.reflection_mark(replace(KEY, session_id="s2")) == Mark(1, AT)
    assert await one.sessions_to_reflect(10) == []


async def test_the_migration_numbers_existing_turns_and_converts_existing_marks(postgres_url: str) -> None:
    """A store made before turn numbers: its turns are numbered in storage order per session, and a
    mark (then a seq) becomes the number of the last turn at or before that seq."""
    from agent_memory.storage.postgres.migrations import MIGRATIONS
    from agent_memory.storage.postgres.rows import ENTRY_COLUMNS, entry_params

    later = {"key", "domain", "read_agents"}  # columns of migrations 012 and after
    kept = [n for n, column in enumerate(ENTRY_COLUMNS) if column not in later]
    columns = [ENTRY_COLUMNS[n] for n in kept]
    insert = f"INSERT INTO entries ({', '.join(columns)}) VALUES ({', '.join('%s' for _ in columns)})"

    before = [step for name, step in MIGRATIONS if name < "008"]
    old = [turn("a"), turn("b"), turn("other session", "s2"), turn("c")]
    with psycopg.connect(postgres_url) as conn:
        for step in before:
            step(conn)
        for entry in old:
            params = entry_params(entry)
            conn.execute(insert, [params[n] for n in kept])
        second = conn.execute("SELECT seq FROM entries WHERE id = %s", (old[1].id,)).fetchone()[0]
        conn.execute("INSERT INTO reflection_marks VALUES ('alice', 'red', 's1', %s, %s)", (second, AT))
        conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        conn.cursor().executemany("INSERT INTO schema_migrations VALUES (%s, %s)",
                                  [(name, AT) for name, _ in MIGRATIONS if name < "008"])
    db = PostgresDatabase(postgres_url, pool_size=2)
    await db.open()
    try:
        assert (await migrate(db))[0] == "008_turn_numbers"
        store = PostgresSessionStore(db)
        assert [(p, e.id) for p, e in await store.session_turns(KEY)] == [(1, old[0].id), (2, old[1].id),
                                                                           (3, old[3].id)]
        assert await store.reflection_mark(KEY) == Mark(2, AT)
        assert [e.id for _, e in await store.session_turns(KEY, after=Mark(2, AT))] == [old[3].id]
        fresh = turn("d")
        await store.transact(lambda tx: tx.insert(fresh))
        assert [p for p, _ in await store.session_turns(KEY)] == [1, 2, 3, 4]  # the counter goes on from there
        assert [(p, e.id) for p, e in await store.session_turns(replace(KEY, session_id="s2"))] == [(1, old[2].id)]
    finally:
        await db.close()
