"""The SQLite adapter on a real file: migrations, FTS5 in step with entries, append-only audit."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_memory.core.memories.crud import CrudService
from agent_memory.core.memories.secrets import Redactor
from agent_memory.core.model.clock import utc_now
from agent_memory.core.model.commands import Call, EntryChange, NewEntry, Removal
from agent_memory.core.model.cursor import CursorCodec
from agent_memory.core.model.models import Caller, Scope, SystemType
from agent_memory.core.model.rules import Limits
from agent_memory.storage.sqlite.audit import SqliteAuditLog
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.entries import SqliteEntryRepository
from agent_memory.storage.sqlite.migrations import MIGRATIONS, migrate

pytestmark = pytest.mark.anyio

CALL = Call(Caller("alice", SystemType.SYS1, "red"), "req_test")


async def _open(path: Path) -> Database:
    db = Database(path)
    await db.open()
    await migrate(db)
    return db


async def test_migrations_apply_in_order_once_and_are_recorded(tmp_path: Path) -> None:
    db = Database(tmp_path / "m.db")
    await db.open()
    assert await migrate(db) == [name for name, _ in MIGRATIONS]
    assert await migrate(db) == []
    await db.close()
    conn = sqlite3.connect(tmp_path / "m.db")
    recorded = [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    assert recorded == sorted(name for name, _ in MIGRATIONS)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_fts_index_follows_create_update_and_delete(tmp_path: Path) -> None:
    db = await _open(tmp_path / "f.db")
    audit = SqliteAuditLog(db)
    crud = CrudService(SqliteEntryRepository(db), audit, CursorCodec(b"s" * 32), Limits(), utc_now, Redactor())
    entry = await crud.create(CALL, Scope.AGENT, "alice", NewEntry(content="The penguins migrate in winter",
                                                                   tags=("birds",)))

    async def matches(term: str) -> list[str]:
        async with db.reading() as conn:
            rows = await conn.execute_fetchall(
                "SELECT e.id FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid "
                "WHERE entries_fts MATCH ? ORDER BY bm25(entries_fts)", (term,))
        return [row[0] for row in rows]

    assert await matches("penguin") == [entry.id]  # porter stemming
    assert await matches("birds") == [entry.id]
    await crud.update(CALL, Scope.AGENT, "alice", EntryChange(entry.id, {"content": "Otters hold hands asleep"}))
    assert await matches("penguin") == []
    assert await matches("otter") == [entry.id]
    await crud.delete(CALL, Scope.AGENT, "alice", Removal(entry.id))
    assert await matches("otter") == []
    await audit.aclose()
    await db.close()


async def test_audit_table_is_append_only(tmp_path: Path) -> None:
    db = await _open(tmp_path / "a.db")
    audit = SqliteAuditLog(db)
    crud = CrudService(SqliteEntryRepository(db), audit, CursorCodec(b"s" * 32), Limits(), utc_now, Redactor())
    await crud.create(CALL, Scope.AGENT, "alice", NewEntry(content="x"))
    await audit.aclose()
    await db.close()
    conn = sqlite3.connect(tmp_path / "a.db")
    assert conn.execute("SELECT COUNT(*) FROM audit").fetchone()[0] == 1
    for statement in ("UPDATE audit SET outcome = 'forged'", "DELETE FROM audit"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(statement)


async def test_failed_transaction_rolls_back_everything(tmp_path: Path) -> None:
    db = await _open(tmp_path / "r.db")

    def work(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO server_meta (key, value) VALUES ('half', 'done')")
        raise ValueError("boom")

    with pytest.raises(ValueError):
        await db.transact(work)
    async with db.reading() as conn:
        assert list(await conn.execute_fetchall("SELECT * FROM server_meta WHERE key = 'half'")) == []
    # the writer is usable afterwards: no transaction was left open
    await db.transact(lambda conn: conn.execute("INSERT INTO server_meta (key, value) VALUES ('ok', '1')"))
    await db.close()


async def test_migration_pads_years_stored_with_fewer_than_four_digits(tmp_path: Path) -> None:
    db = await _open(tmp_path / "y.db")
    audit = SqliteAuditLog(db)
    crud = CrudService(SqliteEntryRepository(db), audit, CursorCodec(b"s" * 32), Limits(), utc_now, Redactor())
    entries = [await crud.create(CALL, Scope.AGENT, "alice", NewEntry(content=f"turn {n}")) for n in range(4)]
    await audit.aclose()
    await db.close()
    conn = sqlite3.connect(tmp_path / "y.db")
    # How earlier versions stored years 999, 45 and 7 (strftime's %Y does not pad).
    for entry, stamp in zip(entries, ("999-01-02T00:00:00.000000Z", "45-06-07T08:09:10.000000Z",
                                      "7-01-01T00:00:00.000000Z"), strict=False):
        conn.execute("UPDATE entries SET created_at = ?, updated_at = ? WHERE id = ?", (stamp, stamp, entry.id))
    conn.execute("DELETE FROM schema_migrations WHERE name = '010_four_digit_years'")
    conn.commit()
    conn.close()
    db = await _open(tmp_path / "y.db")
    async with db.reading() as reader:
        rows = await reader.execute_fetchall("SELECT created_at, updated_at FROM entries ORDER BY created_at")
    await db.close()
    stamps = [row[0] for row in rows]
    assert stamps[:3] == ["0007-01-01T00:00:00.000000Z", "0045-06-07T08:09:10.000000Z", "0999-01-02T00:00:00.000000Z"]
    assert stamps[3].startswith("20") and [row[1] for row in rows[:3]] == stamps[:3]
