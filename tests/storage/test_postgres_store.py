"""What only the PostgreSQL store has: its migrations under concurrent starts, its schema (pgvector,
the keyword index, append-only audit) and a connection URL whose password never shows."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from urllib.parse import urlsplit

import anyio
import pytest

from agent_memory.core.model.models import Scope
from tests.postgres import PostgresForTests
from tests.storage.stores import stored

pytestmark = pytest.mark.anyio
psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from agent_memory.storage.postgres.database import (  # noqa: E402 - after the driver check
    PostgresDatabase,
    PostgresUnavailable,
    redacted_url,
)
from agent_memory.storage.postgres.entries import PostgresEntryRepository  # noqa: E402
from agent_memory.storage.postgres.migrations import (  # noqa: E402
    MIGRATIONS,
    PostgresSetupError,
    migrate,
    read_meta,
)


@pytest.fixture
async def db(postgres_url: str) -> AsyncIterator[PostgresDatabase]:
    database = PostgresDatabase(postgres_url, pool_size=4)
    await database.open()
    try:
        yield database
    finally:
        await database.close()


async def test_servers_starting_together_apply_the_migrations_once(postgres_url: str) -> None:
    applied: list[list[str]] = []
    databases = [PostgresDatabase(postgres_url, pool_size=2) for _ in range(3)]

    async def start(database: PostgresDatabase) -> None:
        await database.open()
        applied.append(await migrate(database))

    try:
        async with anyio.create_task_group() as tg:
            for database in databases:
                tg.start_soon(start, database)
        assert sorted(applied, key=len) == [[], [], [name for name, _ in MIGRATIONS]]
        secrets = {await read_meta(database, "cursor_secret") for database in databases}
        assert len(secrets) == 1 and len(secrets.pop() or "") == 64
    finally:
        for database in databases:
            await database.close()


async def test_schema_has_pgvector_hnsw_and_the_keyword_index(db: PostgresDatabase) -> None:
    await migrate(db)

    def inspect(conn: psycopg.Connection) -> tuple[object, ...]:
        extension = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        indexes = {row[0]: row[1] for row in conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('entries', 'entry_vectors')")}
        return extension, indexes

    extension, indexes = await db.read(inspect)
    assert extension is not None
    assert "USING hnsw (embedding vector_cosine_ops)" in indexes["entry_vectors_nearest"]  # type: ignore[index]
    assert "USING gin (search)" in indexes["entries_search"]  # type: ignore[index]


async def test_keyword_index_partitions_and_vectors_follow_the_entries(db: PostgresDatabase) -> None:
    await migrate(db)
    repo = PostgresEntryRepository(db)
    entry = replace(stored(Scope.TEAM, "red/ops", team=None, content="The builds were running slowly"),
                    tags=("caching",))
    await repo.transact(lambda tx: tx.insert(entry))

    def look(conn: psycopg.Connection) -> tuple[object, ...]:
        matches = [conn.execute("SELECT count(*) FROM entries WHERE search @@ plainto_tsquery('english', %s)",
                                (word,)).fetchone()[0] for word in ("run", "build", "cache", "absent")]
        partitions = conn.execute("SELECT scope, namespace FROM partitions").fetchall()
        conn.execute("INSERT INTO entry_vectors (entry_id, scope, namespace, embedding) VALUES (%s, %s, %s, %s)",
                     (entry.id, "team", "red/ops", "[" + ",".join(["0.1"] * 384) + "]"))
        return matches, partitions

    matches, partitions = await db.transact(look)
    assert matches == [1, 1, 1, 0]
    assert partitions == [("team", "red/ops")]
    assert await repo.transact(lambda tx: tx.delete(entry.id, expected_etag=entry.etag))
    assert await db.read(lambda conn: conn.execute("SELECT count(*) FROM entry_vectors").fetchone()) == (0,)


async def test_a_role_that_may_not_create_pgvector_is_told_what_to_do(
        postgres_server: PostgresForTests, postgres_url: str) -> None:
    database = urlsplit(postgres_url).path.lstrip("/")
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'am_plain'").fetchone() is None:
            conn.execute("CREATE ROLE am_plain LOGIN")
        conn.execute(f'ALTER DATABASE "{database}" OWNER TO am_plain')
    plain = PostgresDatabase(postgres_url.replace("postgres@", "am_plain@", 1), pool_size=1)
    await plain.open()
    try:
        with pytest.raises(PostgresSetupError, match="CREATE EXTENSION vector"):
            await migrate(plain)
        assert await plain.read(lambda conn: conn.execute("SELECT to_regclass('entries')").fetchone()) == (None,)
        with psycopg.connect(postgres_server.url_for(database), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")  # what the operator does once, as a superuser
        assert await migrate(plain) == [name for name, _ in MIGRATIONS]
    finally:
        await plain.close()


async def test_audit_is_append_only(db: PostgresDatabase) -> None:
    await migrate(db)
    await db.transact(lambda conn: conn.execute(
        "INSERT INTO audit (at, request_id, agent_id, team, system_type, tool, action, outcome) "
        "VALUES ('2026-01-01T00:00:00.000Z', 'r', 'a', 't', 'sys1', 'memory_crud', 'read', 'ok')"))
    for statement in ("UPDATE audit SET outcome = 'denied'", "DELETE FROM audit", "TRUNCATE audit"):
        with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
            await db.transact(lambda conn, s=statement: conn.execute(s))
    assert await db.read(lambda conn: conn.execute("SELECT count(*) FROM audit").fetchone()) == (1,)


async def test_a_password_never_shows_in_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    assert redacted_url("postgresql://memory:hunter2@db:5432/memory?sslmode=require") == (
        "postgresql://memory:***@db:5432/memory?sslmode=require")
    assert redacted_url("postgresql://memory@db/memory") == "postgresql://memory@db/memory"
    monkeypatch.setenv("PGPASSWORD", "swordfish")
    unreachable = PostgresDatabase("postgresql://memory:hunter2@127.0.0.1:1/memory", connect_timeout=1)
    with pytest.raises(PostgresUnavailable) as refused:
        await unreachable.open()
    message = str(refused.value)
    assert "127.0.0.1" in message and "hunter2" not in message and "swordfish" not in message
    assert "hunter2" not in repr(unreachable.__dict__.get("_pool"))
    with pytest.raises(ValueError, match="postgresql://"):
        PostgresDatabase("mysql://memory@db/memory")


async def test_the_password_comes_from_the_url_or_pgpassword(
        postgres_server: PostgresForTests, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    role = postgres_server.password_role
    if role is None:
        pytest.skip("an external server (MEMORY_TEST_POSTGRES_URL): its authentication is its own")
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is None:
            conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'hunter2-secret'")
    assert postgres_url.startswith("postgresql://postgres@")
    as_role = postgres_url.replace("postgres@", f"{role}@", 1)

    async def who(url: str) -> str:
        database = PostgresDatabase(url, pool_size=1, connect_timeout=2)
        await database.open()
        try:
            return str((await database.read(lambda conn: conn.execute("SELECT current_user").fetchone()))[0])
        finally:
            await database.close()

    monkeypatch.delenv("PGPASSWORD", raising=False)
    assert await who(as_role.replace(f"{role}@", f"{role}:hunter2-secret@", 1)) == role
    monkeypatch.setenv("PGPASSWORD", "hunter2-secret")
    assert await who(as_role) == role
    monkeypatch.setenv("PGPASSWORD", "wrong-secret")
    with pytest.raises(PostgresUnavailable, match="password authentication failed") as refused:
        await who(as_role)
    assert "secret" not in str(refused.value)
