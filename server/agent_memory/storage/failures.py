"""Storage failures an operator can act on (a full disk, a database held busy by another
process), told apart from other errors by stable reasons, without exposing internal text: each
driver's part in its store's package (`sqlite/failures.py`, `postgres/failures.py`), the OS's and
Chroma's here. `FAILURES` answers the layers above storage (`core.ports.FailureReader`), handed to
them by the composition root."""

from __future__ import annotations

import errno

from agent_memory.core.ports.failures import EXPLANATIONS, STORAGE_BUSY, STORAGE_FULL
from agent_memory.storage.postgres.failures import postgres_reason, postgres_refused_data, psycopg_error
from agent_memory.storage.sqlite.failures import sqlite_error, sqlite_reason, sqlite_refused_data

__all__ = ["EXPLANATIONS", "FAILURES", "STORAGE_BUSY", "STORAGE_FULL", "failure_detail", "failure_reason",
           "storage_reason"]

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
# SQLite's own messages, also as Chroma (whose store is SQLite too) passes them on.
_FULL_WORDS = ("database or disk is full", "no space left on device", "disk quota exceeded")
_BUSY_WORDS = ("database is locked", "database is busy", "database table is locked")


def storage_reason(exc: BaseException | None) -> str | None:
    """`STORAGE_FULL` or `STORAGE_BUSY` when `exc` (or what caused it) says so, else None: by
    SQLite's result code, the OS's errno, PostgreSQL's SQLSTATE, and for anything else (Chroma
    passes SQLite's failures on as its own errors) by SQLite's and the OS's words."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if psycopg_error(exc):
            reason = postgres_reason(exc)
            if reason is not None:
                return reason
            exc = exc.__cause__ or exc.__context__
            continue
        reason = sqlite_reason(exc)
        if reason is not None:
            return reason
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
    trusted = sqlite_error(exc) or isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in (
        "agent_memory", "chromadb")
    text = str(exc).strip().splitlines()[0][:160] if trusted and str(exc).strip() else ""
    return text or type(exc).__name__


def failure_reason(exc: BaseException) -> str:
    """A stable reason for logs and `stats`: a storage reason, else the error's type."""
    return storage_reason(exc) or type(exc).__name__


def refused_data(exc: BaseException) -> bool:
    """Whether a store refused a statement for the data it was given rather than for a reason of
    its own (full, busy, unreachable)."""
    if isinstance(exc, ValueError | OverflowError) or sqlite_refused_data(exc):
        return storage_reason(exc) is None
    return postgres_refused_data(exc)


class StoreFailures:
    """`core.ports.FailureReader` for every store of this package."""

    def reason(self, exc: BaseException) -> str | None:
        return storage_reason(exc)

    def detail(self, exc: BaseException) -> str:
        return failure_detail(exc)

    def refused_data(self, exc: BaseException) -> bool:
        return refused_data(exc)


FAILURES = StoreFailures()
