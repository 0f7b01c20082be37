"""Ports the domain needs from storage. Adapters live in `agent_memory.storage`."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from agent_memory.core.cursor import Position
from agent_memory.core.models import AuditEvent, Entry, ListQuery


class WriteTransaction(Protocol):
    """One short write transaction: everything in it commits together or not at all."""

    async def get(self, entry_id: str) -> Entry | None: ...

    async def insert(self, entry: Entry) -> None: ...

    async def replace(self, entry: Entry, *, expected_etag: str) -> bool:
        """Compare-and-swap: store `entry` only if the stored etag is still `expected_etag`."""
        ...

    async def delete(self, entry_id: str, *, expected_etag: str) -> bool: ...

    async def audit(self, event: AuditEvent) -> None: ...


class EntryRepository(Protocol):
    def write(self) -> AbstractAsyncContextManager[WriteTransaction]: ...

    async def get_many(self, entry_ids: Sequence[str]) -> dict[str, Entry]: ...

    async def list_page(self, query: ListQuery, after: Position | None, limit: int) -> list[Entry]:
        """Entries matching `query`, newest first (created_at, id), strictly after `after`."""
        ...


class AuditSink(Protocol):
    """Records audit events that are not part of a write transaction (reads, denials)."""

    async def record(self, event: AuditEvent) -> None: ...
