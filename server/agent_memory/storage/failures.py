"""Storage failures an operator can act on (a full disk, a database held busy by another
process), told apart from other errors by stable reasons, without exposing internal text."""

from __future__ import annotations

import errno
import sqlite3

STORAGE_FULL = "storage_full"
STORAGE_BUSY = "storage_busy"

EXPLANATIONS = {
    STORAGE_FULL: "the disk holding the memory store is full; free space and retry",
    STORAGE_BUSY: "the memory database is busy (another process holds a long write); retry shortly",
}

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
# SQLite's own messages, also as Chroma (whose store is SQLite too) passes them on.
_FULL_WORDS = ("database or disk is full", "no space left on device", "disk quota exceeded")
_BUSY_WORDS = ("database is locked", "database is busy", "database table is locked")
# PostgreSQL's SQLSTATEs (psycopg's `error.sqlstate`; its text is never read: it may quote data).
_PG_FULL = {"53100"}  # disk_full
_PG_BUSY = {
    "55P03",  # lock_not_available: lock_timeout ran out waiting for another session's lock
    "40001",  # serialization_failure
    "40P01",  # deadlock_detected
    "57014",  # query_canceled: statement_timeout ran out
    "53300",  # too_many_connections
}


def _from_psycopg(exc: BaseException) -> bool:
    """A psycopg error (psycopg is never imported here: a SQLite server need not load it)."""
    return any(cls.__module__.partition(".")[0] == "psycopg" for cls in type(exc).__mro__)


def _postgres_reason(exc: BaseException) -> str | None:
    sqlstate = getattr(exc, "sqlstate", None)
    if sqlstate in _PG_FULL:
        return STORAGE_FULL
    return STORAGE_BUSY if sqlstate in _PG_BUSY else None


def storage_reason(exc: BaseException | None) -> str | None:
    """`STORAGE_FULL` or `STORAGE_BUSY` when `exc` (or what caused it) says so, else None: by
    SQLite's result code, the OS's errno, PostgreSQL's SQLSTATE, and for anything else (Chroma
    passes SQLite's failures on as its own errors) by SQLite's and the OS's words."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if _from_psycopg(exc):
            reason = _postgres_reason(exc)
            if reason is not None:
                return reason
            exc = exc.__cause__ or exc.__context__
            continue
        if isinstance(exc, sqlite3.Error):
            primary = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
            if primary == sqlite3.SQLITE_FULL:
                return STORAGE_FULL
            if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                return STORAGE_BUSY
        if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
            return STORAGE_FULL
        text = str(exc).lower()
        if any(word in text for word in _FULL_WORDS):
            return STORAGE_FULL
        if any(word in text for word in _BUSY_WORDS):
            return STORAGE_BUSY
        exc = exc.__cause__ or exc.__context__
    return None


def failure_detail(exc: BaseException) -> str:
    """A short explanation for logs that never quotes memory content: the messages of SQLite, the
    OS, Chroma (which is given vectors and ids, never entry text) and our own code; for anything
    else only the error's type."""
    trusted = isinstance(exc, (sqlite3.Error, OSError)) or type(exc).__module__.split(".")[0] in (
        "agent_memory", "chromadb")
    text = str(exc).strip().splitlines()[0][:160] if trusted and str(exc).strip() else ""
    return text or type(exc).__name__


def failure_reason(exc: BaseException) -> str:
    """A stable reason for logs and `stats`: a storage reason, else the error's type."""
    return storage_reason(exc) or type(exc).__name__
