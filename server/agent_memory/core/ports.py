"""Ports the domain needs from storage. Adapters live in `agent_memory.storage`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from agent_memory.core.cursor import Position
from agent_memory.core.models import AuditEvent, Entry, ListQuery

T = TypeVar("T")


class WriteTransaction(Protocol):
    """The inside of one short write transaction. Synchronous on purpose: a transaction body
    does no I/O of its own and never waits on anything but the database, so it can run in one
    piece next to the database and is never left half-done by a cancelled task."""

    def get(self, entry_id: str) -> Entry | None: ...

    def insert(self, entry: Entry) -> None: ...

    def replace(self, entry: Entry, *, expected_etag: str) -> bool:
        """Compare-and-swap: store `entry` only if the stored etag is still `expected_etag`
        (and its version is `entry.version - 1`)."""
        ...

    def delete(self, entry_id: str, *, expected_etag: str) -> bool: ...

    def audit(self, event: AuditEvent) -> None: ...

    def enqueue_vector(self, entry: Entry, op: str) -> None:
        """Queue the entry's vector change ('upsert' or 'delete') in this same transaction, so the
        derived vector index can always catch up with what committed."""
        ...


class EntryRepository(Protocol):
    async def transact(self, work: Callable[[WriteTransaction], T]) -> T:
        """Run `work` in one write transaction: committed if it returns, rolled back if it raises
        (the exception propagates)."""
        ...

    async def get_many(self, entry_ids: Sequence[str]) -> dict[str, Entry]: ...

    async def list_page(self, query: ListQuery, after: Position | None, limit: int) -> list[Entry]:
        """Entries matching `query`, newest first (created_at, id), strictly after `after`."""
        ...


class AuditSink(Protocol):
    """Records audit events that are not part of a write transaction (reads, denials)."""

    async def record(self, event: AuditEvent) -> None: ...
