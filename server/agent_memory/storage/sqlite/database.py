"""Connections, pragmas and short explicit write transactions."""

from __future__ import annotations

import sqlite3
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import aiosqlite
import anyio

from agent_memory.storage.failures import STORAGE_FULL, storage_reason
from agent_memory.storage.files import create_private_file, private_dir, warn_if_shared

MEMORY = ":memory:"
T = TypeVar("T")

if not callable(getattr(aiosqlite.Connection, "_execute", None)):  # pragma: no cover - version guard
    raise ImportError("this aiosqlite lacks Connection._execute; install a version within pyproject's range")


class SqliteUnavailable(RuntimeError):
    """The file cannot be opened as a database (its directory cannot be made, it is not a
    database, permission denied); the message says which and where."""


class Database:
    """A writer connection and, for files, a reader connection that sees only committed data.

    Each write transaction runs as one function on the writer's aiosqlite worker thread
    (`BEGIN IMMEDIATE` ... `COMMIT`): one thread hand-off instead of one per statement, and the
    write lock is never held across an `await`, so a cancelled caller cannot strand it. aiosqlite
    runs queued functions one at a time, so transactions of one process never interleave; across
    processes `BEGIN IMMEDIATE` waits up to `busy_timeout` for the other's lock.

    Nothing made by a connection's statements leaves its thread alive (see `_settled`): freeing a
    cursor resets its statement, and sqlite3 shares statements between cursors through its cache,
    so a cursor freed on the event loop's thread could reset a statement the worker thread is
    running at that moment ("bad parameter or other API misuse").
    """

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = 5000) -> None:
        self._path = str(path)
        self._busy_timeout_ms = busy_timeout_ms
        self._writer: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None
        self.on_storage_full: Callable[[], None] | None = None  # told when a write finds the disk full

    @property
    def in_memory(self) -> bool:
        return self._path == MEMORY

    async def open(self) -> None:
        """Creates the file (and its directory) private to its owner, or warns once when an
        existing one is readable by others (`agent_memory.storage.files`).

        Raises: SqliteUnavailable (and leaves nothing open)."""
        try:
            if not self.in_memory:
                path = Path(self._path)
                warn_if_shared([path.parent, path, *(path.with_name(path.name + s) for s in ("-wal", "-shm"))])
                private_dir(path.parent)
                create_private_file(path)  # SQLite gives its -wal and -shm files this file's mode
            self._writer = await self._connect()
            if not self.in_memory:
                await self._writer.execute_fetchall("PRAGMA journal_mode=WAL")
                self._reader = await self._connect()
                await self._reader.execute_fetchall("PRAGMA query_only=ON")
        except (OSError, sqlite3.Error) as exc:
            await self.close()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise SqliteUnavailable(f"cannot open the SQLite store {self._path}: {reason}") from None

    async def _connect(self) -> aiosqlite.Connection:
        conn = await aiosqlite.connect(self._path, isolation_level=None)
        try:
            await conn.execute_fetchall(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
            await conn.execute_fetchall("PRAGMA synchronous=NORMAL")
            await conn.execute_fetchall("PRAGMA foreign_keys=ON")
        except BaseException:
            with anyio.CancelScope(shield=True):
                await conn.close()  # else its worker thread keeps the process from exiting
            raise
        return conn

    async def close(self) -> None:
        with anyio.CancelScope(shield=True):
            for conn in (self._reader, self._writer):
                if conn is not None:
                    await conn.close()
        self._reader = self._writer = None

    def _require_writer(self) -> aiosqlite.Connection:
        if self._writer is None:
            raise RuntimeError("database is not open")
        return self._writer

    async def transact(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work(connection)` inside `BEGIN IMMEDIATE` ... `COMMIT` on the writer thread;
        roll back and re-raise if it raises."""
        writer = self._require_writer()

        def run() -> T:
            conn = writer._conn  # noqa: SLF001 - the sqlite3 connection, used only on its own thread
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
            except BaseException as exc:
                conn.execute("ROLLBACK")
                _settled(None, exc)
                raise
            conn.execute("COMMIT")
            return _settled(result)

        try:
            return await writer._execute(run)  # noqa: SLF001 - aiosqlite's run-on-worker-thread hook
        except sqlite3.Error as exc:
            if self.on_storage_full is not None and storage_reason(exc) == STORAGE_FULL:
                self.on_storage_full()
            raise

    async def read(self, work: Callable[[sqlite3.Connection], T], *, snapshot: bool = False) -> T:
        """Run `work(connection)` on the reader's thread (several statements, one hand-off). Each
        statement sees what was committed when it started; `snapshot` (PostgreSQL's repeatable
        read, asked for by the repository frame both stores share) changes nothing here."""
        conn = self._reader if self._reader is not None else self._require_writer()

        def run() -> T:
            try:
                return _settled(work(conn._conn))  # noqa: SLF001 - see transact()
            except BaseException as exc:
                _settled(None, exc)
                raise

        return await conn._execute(run)  # noqa: SLF001 - see transact()

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[aiosqlite.Connection]:
        """A connection for read statements (committed data only, for files)."""
        yield self._reader if self._reader is not None else self._require_writer()


def _settled(result: T, failure: BaseException | None = None) -> T:
    """On the connection's thread, before a result or an exception goes to the event loop: close
    a cursor returned as the result (`executemany`'s, say; its `rowcount` stays readable), and
    drop the locals of a failure's frames (a cursor held there would be freed with the traceback,
    on the event loop's thread)."""
    if isinstance(result, sqlite3.Cursor):
        result.close()
    if failure is not None:
        traceback.clear_frames(failure.__traceback__)
    return result
