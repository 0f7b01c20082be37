"""Ports the domain needs from storage. Adapters live in `agent_memory.storage`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from agent_memory.core.cursor import Position
from agent_memory.core.extract import Insight, Turn
from agent_memory.core.models import AuditEvent, Entry, Layer, ListFilters, ListQuery
from agent_memory.core.visibility import Area

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

    def has_pending_conflict(self, entry_id: str) -> bool:
        """Whether a conflict entry refers to this entry (it must then stay until reconciled)."""
        ...

    def audit(self, event: AuditEvent) -> None: ...

    def mark_reflected(self, entry_ids: Sequence[str], at: str) -> None:
        """Move the reflection marks of these session turns' sessions past them (imported turns
        were reflected where they came from)."""

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


@dataclass(frozen=True, slots=True)
class SessionKey:
    """One session of one agent in one team: its turns live in the agent's own namespace, owned by
    that agent, in that team (an agent id reused in another team never sees them)."""

    agent_id: str
    team: str
    session_id: str


@dataclass(frozen=True, slots=True)
class Mark:
    """How far a session has been reflected: the storage position of the last turn distilled, and
    when (turns written after that time count as new even if a position was reused)."""

    position: int = 0
    at: str = ""


class SessionTransaction(WriteTransaction, Protocol):
    def mark_compacted(self, entry_ids: Sequence[str]) -> int:
        """Mark session turns compacted (kept, listable, out of retrieval); returns how many."""
        ...

    def move_reflection_mark(self, key: SessionKey, expected: int, new: int, at: str) -> bool:
        """Compare-and-set the session's reflection watermark (a turn's storage position): False
        when another reflection moved it first."""
        ...


@dataclass(frozen=True, slots=True)
class SessionRef:
    namespace: str
    session_id: str
    owner_agent_id: str
    team: str


class SessionStore(Protocol):
    async def transact(self, work: Callable[[SessionTransaction], T]) -> T: ...

    async def session_turns(self, key: SessionKey, *, after: Mark | None = None,
                            compacted: bool | None = None) -> list[tuple[int, Entry]]:
        """The session's turns (not its summaries), oldest first, with their storage positions;
        with `after`, only those written after that mark."""
        ...

    async def uncompacted_chars(self, key: SessionKey) -> int: ...

    async def compacted_through(self, key: SessionKey) -> int:
        """How many of the session's turns earlier compactions covered: the highest position a
        compaction summary names (tag `turns:<first>-<last>`), or its number of compacted turns if
        higher. The next compaction numbers its turns from here."""
        ...

    async def reflection_mark(self, key: SessionKey) -> Mark: ...

    async def reflections(self, agent_id: str, team: str) -> list[Entry]:
        """Facts and rules earlier reflections stored in the agent namespace (for de-duplication)."""
        ...

    async def sessions_to_reflect(self, limit: int) -> list[SessionRef]:
        """Sessions with turns written after their reflection mark (oldest activity first)."""
        ...


@dataclass(frozen=True, slots=True)
class PrunePolicy:
    now: str
    max_entries_per_namespace: int
    retention_cutoffs: dict[str, str]  # layer -> entries last updated before this go (absent: kept)


@dataclass(frozen=True, slots=True)
class Victim:
    entry_id: str
    scope: str
    namespace: str
    etag: str
    reason: str  # expired | retention | over_limit | erase


class PruneStore(Protocol):
    async def transact(self, work: Callable[[WriteTransaction], T]) -> T: ...

    async def prune_plan(self, policy: PrunePolicy, partitions: Sequence[tuple[str, str]] | None) -> list[Victim]:
        """What pruning would delete now (all partitions, or only those given), in deletion order.
        Never pending conflict entries, nor entries that pending conflicts refer to."""
        ...

    async def namespace_entries(self, area: Area) -> list[Victim]:
        """Every entry inside `area` (a namespace, and with its subtree, every namespace under it)."""
        ...


# Retrieval: the record store's search queries and the semantic index.


class SemanticUnavailable(RuntimeError):
    """Semantic search cannot answer now (loading, failed model, broken index); the message says why."""


@dataclass(frozen=True, slots=True)
class Partition:
    scope: str
    namespace: str


@dataclass(frozen=True, slots=True)
class CandidateFilter:
    now: str
    layers: tuple[Layer, ...] = ()
    tags: tuple[str, ...] = ()
    session_id: str | None = None
    since: str | None = None  # created_at >= since
    until: str | None = None  # created_at < until
    include_superseded: bool = False


class RetrievalStore(Protocol):
    async def keyword_candidates(self, terms: list[str], partitions: list[Partition], areas: tuple[Area, ...],
                                 filters: CandidateFilter, limit: int) -> list[tuple[Entry, int, float, float]]:
        """(entry, sequence number, BM25 score (higher is better), keyword coverage 0..1) for
        visible entries matching any of `terms` (plain words: the store must treat them as text,
        never as query syntax). Coverage: the share of the query's IDF weight the entry holds."""
        ...

    async def readable_keyword_candidates(self, terms: list[str], areas: tuple[Area, ...],
                                          namespaces: tuple[str, ...], filters: CandidateFilter, limit: int
                                          ) -> tuple[list[Partition], list[tuple[Entry, int, float, float]]]:
        """`readable_partitions` and `keyword_candidates` over them, together."""
        ...

    async def partitions_and_pending(self, areas: tuple[Area, ...], namespaces: tuple[str, ...],
                                     filters: CandidateFilter, limit: int
                                     ) -> tuple[list[Partition], tuple[list[tuple[Entry, int]], int]]:
        """`readable_partitions` and `pending_entries` in them, from one snapshot."""
        ...

    async def keyword_scores(self, terms: list[str], seqs: list[int]) -> dict[int, tuple[float, float]]:
        """The same (BM25, coverage) as `keyword_candidates` gives, for these entries (absent: no term)."""
        ...


class SemanticIndex(Protocol):
    """Raises SemanticUnavailable from any method when semantic search cannot answer."""

    async def nearest(self, text: str, partitions: list[Partition], limit: int
                      ) -> tuple[list[tuple[str, float]], list[float]]:
        """The `limit` entries nearest to `text` as (id, cosine), and the query's vector."""
        ...

    async def similarities(self, vector: list[float], partitions: list[Partition],
                           entry_ids: list[str]) -> dict[str, float]:
        """Cosine of `vector` to each of these entries (those indexed)."""
        ...

    async def fresh_similarities(self, vector: list[float], entries: list[Entry]) -> dict[str, float]:
        """Cosine of `vector` to each of these entries' current content, embedded now (entries the
        index has not caught up with)."""
        ...


# The memory console's browsing across every readable area.


@dataclass(frozen=True, slots=True)
class BrowseQuery:
    areas: tuple[Area, ...]  # already the intersection of what the caller may read and what it asked for
    filters: ListFilters
    superseded: bool | None  # None: both; True: only superseded facts; False: only current ones
    now: str


class BrowseStore(Protocol):
    async def browse_page(self, query: BrowseQuery, after: Position | None, limit: int) -> list[Entry]:
        """Entries inside any of `query.areas` matching its filters, newest first, after `after`."""
        ...


# Reflection: distilling turns into facts, and comparing meanings.


class DistillFailed(Exception):
    """The distiller could not give usable facts (unreachable, refused, malformed output)."""


class Distiller(Protocol):
    async def distil(self, turns: list[Turn], max_items: int, known: list[Entry]) -> list[Insight]:
        """`known`: facts already remembered (an insight may name one it `replaces`).
        Raises: DistillFailed."""
        ...


class MeaningUnavailable(Exception):
    """The embedding model is not loaded in this process."""


class Meaning(Protocol):
    async def cosines(self, texts: list[str], entries: list[Entry]) -> list[dict[str, float]]:
        """Cosine of each text to each entry (by id). Raises: MeaningUnavailable."""
        ...


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

    async def vector_backlog(self) -> int:
        """Changes queued for the vector index and not yet applied."""
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
