"""PostgreSQL's failures are told apart by SQLSTATE, never by their text (which may quote data):
real failures driven on a real server map to the reasons an operator can act on, and a write the
server refuses for a lock another session holds reaches the tool caller as `storage_busy`."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from agent_memory.storage.failures import STORAGE_BUSY, STORAGE_FULL, refused_data, storage_reason
from tests.conftest import Agent, make_settings

pytestmark = pytest.mark.anyio
psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from agent_memory.tools.server import create_server  # noqa: E402


def _failure(url: str, *statements: str) -> Exception:
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            for statement in statements:
                conn.execute(statement)
        except psycopg.Error as exc:
            return exc
    raise AssertionError("the statements did not fail")


def test_a_statement_timeout_is_busy(postgres_url: str) -> None:
    exc = _failure(postgres_url, "SET statement_timeout = '20ms'", "SELECT pg_sleep(30)")
    assert exc.sqlstate == "57014" and storage_reason(exc) == STORAGE_BUSY


def test_a_lock_another_session_holds_past_lock_timeout_is_busy(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as holder:
        holder.execute("CREATE TABLE held (x int)")
        holder.commit()
        holder.execute("LOCK TABLE held IN ACCESS EXCLUSIVE MODE")  # held until the rollback below
        exc = _failure(postgres_url, "SET lock_timeout = '20ms'", "SELECT * FROM held")
        holder.rollback()
    assert exc.sqlstate == "55P03" and storage_reason(exc) == STORAGE_BUSY


def test_a_deadlock_and_a_full_disk_are_known_by_their_sqlstate() -> None:
    assert storage_reason(psycopg.errors.DeadlockDetected()) == STORAGE_BUSY
    assert storage_reason(psycopg.errors.SerializationFailure()) == STORAGE_BUSY
    assert storage_reason(psycopg.errors.DiskFull()) == STORAGE_FULL
    wrapped = RuntimeError("the batch failed")
    wrapped.__cause__ = psycopg.errors.DiskFull()
    assert storage_reason(wrapped) == STORAGE_FULL


def test_a_message_that_reads_like_a_busy_database_is_not_taken_for_one(postgres_url: str) -> None:
    exc = _failure(postgres_url, "DO $$ BEGIN RAISE EXCEPTION 'database is locked; no space left on device'; END $$")
    assert exc.sqlstate == "P0001" and storage_reason(exc) is None


def test_refused_values_are_the_entries_fault_not_the_stores(postgres_url: str) -> None:
    unique = _failure(postgres_url, "CREATE TABLE once (x int PRIMARY KEY)", "INSERT INTO once VALUES (1), (1)")
    nul = _failure(postgres_url, "SELECT convert_from('\\x6100'::bytea, 'UTF8')")
    text = _failure(postgres_url, "SELECT 'x'::int")
    assert (unique.sqlstate, nul.sqlstate, text.sqlstate) == ("23505", "22021", "22P02")
    for exc in (unique, nul, text):
        assert storage_reason(exc) is None and refused_data(exc)


async def test_a_write_held_up_by_another_sessions_lock_answers_storage_busy(tmp_path: Path, postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        database = admin.execute("SELECT current_database()").fetchone()[0]
        admin.execute(f'ALTER DATABASE "{database}" SET lock_timeout = \'200ms\'')  # the server's new sessions
    settings = make_settings(tmp_path / "data", backend="postgres", postgres_url=postgres_url)
    async with Client(create_server(settings), mode="auto") as client:
        agent = Agent(client)
        await agent.create("before the lock")
        with psycopg.connect(postgres_url) as holder:
            holder.execute("LOCK TABLE entries IN ACCESS EXCLUSIVE MODE")
            failed, data = await agent.crud(action="create", items=[{"content": "while locked"}])
            holder.rollback()
        error = data["errors"][0]
        assert failed and error["code"] == "INTERNAL" and error["details"]["reason"] == STORAGE_BUSY, data
        assert "LockNotAvailable" not in error["message"] and "lock" not in error["message"], error
        await agent.create("after the lock")
