"""PostgreSQL's part of telling storage failures apart (`storage/failures.py`): by the SQLSTATE
psycopg reports (its text is never read: it may quote data). psycopg is never imported here, so a
SQLite server need not load it."""

from __future__ import annotations

from agent_memory.core.ports.failures import STORAGE_BUSY, STORAGE_FULL

_FULL = {"53100"}  # disk_full
_BUSY = {
    "55P03",  # lock_not_available: lock_timeout ran out waiting for another session's lock
    "40001",  # serialization_failure
    "40P01",  # deadlock_detected
    "57014",  # query_canceled: statement_timeout ran out
    "53300",  # too_many_connections
}


def psycopg_error(exc: BaseException) -> bool:
    """A psycopg error, known by its module name."""
    return any(cls.__module__.partition(".")[0] == "psycopg" for cls in type(exc).__mro__)


def postgres_reason(exc: BaseException) -> str | None:
    sqlstate = getattr(exc, "sqlstate", None)
    if sqlstate in _FULL:
        return STORAGE_FULL
    return STORAGE_BUSY if sqlstate in _BUSY else None


def postgres_refused_data(exc: BaseException) -> bool:
    """PostgreSQL refused a statement for its values: SQLSTATE class 22 (data exception) or 23
    (integrity constraint violation)."""
    sqlstate = getattr(exc, "sqlstate", None)
    return isinstance(sqlstate, str) and sqlstate[:2] in ("22", "23")
