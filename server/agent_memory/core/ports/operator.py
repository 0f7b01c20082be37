"""Ports for operator commands and inspection (export, import, stats, audit, erase)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agent_memory.core.model.areas import Area
from agent_memory.core.model.models import Entry

# Operator commands and inspection (export, import, stats, audit, erase): what they read.

AUDIT_COLUMNS = ("seq", "at", "request_id", "agent_id", "team", "system_type", "tool", "action", "scope",
                 "namespace", "entry_id", "outcome", "details")


@dataclass(frozen=True, slots=True)
class AuditQuery:
    since: str | None = None  # at >= since
    agent: str | None = None
    action: str | None = None
    outcome: str | None = None
    entry_id: str | None = None
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class PartitionCount:
    scope: str
    namespace: str
    layer: str
    entries: int
    compacted: int
    conflicts: int


class OperatorStore(Protocol):
    async def audit_rows(self, query: AuditQuery) -> list[dict[str, Any]]:
        """Audit rows (AUDIT_COLUMNS, `details` decoded) matching `query`, oldest first."""
        ...

    async def partition_counts(self, areas: tuple[Area, ...] | None) -> list[PartitionCount]:
        """Entries per (scope, namespace, layer), inside `areas` (None: everything)."""
        ...

    async def vector_backlog(self, areas: tuple[Area, ...] | None = None) -> int:
        """Changes queued for the vector index and not yet applied; with `areas`, only those of
        entries inside them (what one caller may read: a queued delete has no entry left)."""
        ...

    async def stored_vectors(self) -> int:
        """Vectors the record store keeps a copy of."""
        ...

    async def pending_vector_changes(self, entry_ids: Sequence[str]) -> int:
        """Queued vector changes of these entries."""
        ...

    async def stored_ids(self, entry_ids: Sequence[str]) -> set[str]:
        """Which of `entry_ids` are stored."""
        ...

    async def entries_after(self, area: Area | None, after: int, limit: int) -> list[tuple[int, Entry]]:
        """(storage position, entry) of up to `limit` entries in `area` (None: all) past position
        `after`, in storage order (the order they were written)."""
        ...

    async def storage_bytes(self) -> int | None:
        """The record store's size on disk (None when it has no file of its own)."""
        ...
