"""Connections, pragmas and short explicit write transactions."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite
import anyio

MEMORY = ":memory:"


class Database:
    """One writer connection (transactions serialised by a lock, `BEGIN IMMEDIATE` across
    processes) and, for files, one reader connection that sees only committed data (WAL)."""

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = 5000) -> None:
        self._path = str(path)
        self._busy_timeout_ms = busy_timeout_ms
        self._lock = asyncio.Lock()
        self._writer: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None

    @property
    def in_memory(self) -> bool:
        return self._path == MEMORY

    async def open(self) -> None:
        if not self.in_memory:
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        self._writer = await self._connect()
        if not self.in_memory:
            await self._writer.execute_fetchall("PRAGMA journal_mode=WAL")
            self._reader = await self._connect()
            await self._reader.execute_fetchall("PRAGMA query_only=ON")

    async def _connect(self) -> aiosqlite.Connection:
        conn = await aiosqlite.connect(self._path, isolation_level=None)
        conn.row_factory = sqlite3.Row
        await conn.execute_fetchall(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA foreign_keys=ON")
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

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """A write transaction: committed when the block exits cleanly, else rolled back.

        BEGIN, COMMIT and ROLLBACK are shielded from cancellation: aiosqlite runs a statement
        even when its awaiting task is cancelled, so an unshielded BEGIN could leave a
        transaction (and the database's write lock) open with nobody left to end it."""
        conn = self._require_writer()
        async with self._lock:
            with anyio.CancelScope(shield=True):
                await conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                with anyio.CancelScope(shield=True):
                    await conn.execute("COMMIT")
            except BaseException:
                with anyio.CancelScope(shield=True):
                    if conn.in_transaction:
                        await conn.execute("ROLLBACK")
                raise

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[aiosqlite.Connection]:
        """A connection for one read statement (committed data only)."""
        if self._reader is not None:
            yield self._reader
            return
        async with self._lock:
            yield self._require_writer()
