"""What the layers above storage may ask about a failure a store raised, without knowing its
driver (`storage/failures.py` answers for SQLite, PostgreSQL, Chroma and the OS)."""

from __future__ import annotations

from typing import Protocol

STORAGE_FULL = "storage_full"
STORAGE_BUSY = "storage_busy"

# What an operator can do about each (in the answers of tools, the console and the commands).
EXPLANATIONS = {
    STORAGE_FULL: "the disk holding the memory store is full; free space and retry",
    STORAGE_BUSY: "the memory database is busy (another process holds a long write); retry shortly",
}


class FailureReader(Protocol):
    def reason(self, exc: BaseException) -> str | None:
        """`STORAGE_FULL` or `STORAGE_BUSY` when the failure (or what caused it) is one an
        operator can act on, else None."""
        ...

    def detail(self, exc: BaseException) -> str:
        """A short explanation for logs that never quotes memory content."""
        ...

    def refused_data(self, exc: BaseException) -> bool:
        """Whether the store refused a statement for the data it was given (a value it cannot
        hold, a broken constraint) rather than for a reason of its own (full, busy, unreachable)."""
        ...
