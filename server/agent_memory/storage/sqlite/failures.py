"""SQLite's part of telling storage failures apart (`storage/failures.py`): by its result codes."""

from __future__ import annotations

import sqlite3

from agent_memory.core.ports.failures import STORAGE_BUSY, STORAGE_FULL


def sqlite_reason(exc: BaseException) -> str | None:
    """STORAGE_FULL or STORAGE_BUSY by SQLite's primary result code, else None."""
    if not isinstance(exc, sqlite3.Error):
        return None
    primary = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if primary == sqlite3.SQLITE_FULL:
        return STORAGE_FULL
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return STORAGE_BUSY
    return None


def sqlite_error(exc: BaseException) -> bool:
    """An error of SQLite's (whose messages quote no memory content)."""
    return isinstance(exc, sqlite3.Error)


def sqlite_refused_data(exc: BaseException) -> bool:
    """SQLite refused a statement for its values (a value it cannot hold, a broken constraint)."""
    return isinstance(exc, sqlite3.DataError | sqlite3.IntegrityError)
