"""Ports for finding memories: the record store's search queries, the semantic index, and the
memory console's browsing across every readable area."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agent_memory.core.model.areas import Area
from agent_memory.core.model.cursor import Position
from agent_memory.core.model.models import Domain, Entry, Layer, ListFilters

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
    domains: tuple[Domain, ...] = ()  # any of these (empty: every entry, with or without a domain)


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
                           entry_ids: list[str], ahead: object | None = None) -> dict[str, float]:
        """Cosine of `vector` to each of these entries (those indexed). `ahead` is what
        `vectors_ahead` returned for entries including these, if anything."""
        ...

    async def vectors_ahead(self, entry_ids: list[str]) -> object | None:
        """Read ahead, before the query's vector is known, what `similarities` will need for
        these entries (None: nothing to read ahead). Lets retrieval read the keyword candidates'
        stored vectors while the query is still being embedded."""
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
