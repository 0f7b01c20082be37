"""Retrieval queries on SQLite: readable partitions, FTS5 keyword candidates, visible entries."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from agent_memory.core.access.visibility import Area
from agent_memory.core.model.models import Entry
from agent_memory.core.ports import CandidateFilter, Partition
from agent_memory.storage.frame.search import readable_partitions, visibility
from agent_memory.storage.sqlite.bm25 import QueryStemmer, TermStats, rescore, selective_terms
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.dialect import SQLITE
from agent_memory.storage.sqlite.fts import fts_query
from agent_memory.storage.sqlite.matches import BestMatches
from agent_memory.storage.sqlite.rows import ENTRY_COLUMNS, row_to_entry

COLUMNS = ", ".join(f"e.{c}" for c in ENTRY_COLUMNS)
_CONTENT, _TAGS = ENTRY_COLUMNS.index("content"), ENTRY_COLUMNS.index("tags")


def _docs(rows: list[Any], width: int) -> list[tuple[int, str, str]]:
    """(rowid, content, tags) of rows read as ENTRY_COLUMNS then rowid: what `rescore` would read again."""
    return [(int(row[width]), row[_CONTENT], row[_TAGS]) for row in rows]


def _visibility(partitions: list[Partition], areas: tuple[Area, ...], f: CandidateFilter) -> tuple[str, list[object]]:
    return visibility(SQLITE, partitions, areas, f)


def _partitions(conn: sqlite3.Connection, areas: tuple[Area, ...], namespaces: tuple[str, ...]) -> list[Partition]:
    return readable_partitions(SQLITE, conn, areas, namespaces)


def _pending(conn: sqlite3.Connection, partitions: list[Partition], areas: tuple[Area, ...],
             filters: CandidateFilter, limit: int) -> tuple[list[tuple[Entry, int]], int]:
    where, params = _visibility(partitions, areas, filters)
    waiting = "e.id IN (SELECT entry_id FROM vector_outbox WHERE op = 'upsert')"
    if not limit:
        return [], int(conn.execute(f"SELECT COUNT(*) FROM entries e WHERE {waiting} AND {where}", params)
                       .fetchone()[0])
    # One statement, so the count and the rows are one snapshot: the indexer may apply the outbox
    # between two statements (a count of 1 with no rows once read as "not covered").
    rows = conn.execute(f"SELECT {COLUMNS}, e.rowid, COUNT(*) OVER () FROM entries e WHERE {waiting} AND {where} "
                        f"ORDER BY e.rowid DESC LIMIT ?", [*params, limit]).fetchall()
    width = len(ENTRY_COLUMNS)
    total = int(rows[0][width + 1]) if rows else 0
    return [(row_to_entry(row[:width]), int(row[width])) for row in rows], total


class SqliteRetrievalStore:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._stemmer = QueryStemmer()
        self._stats = TermStats()  # the index's term statistics, kept while nothing is committed
        self._best = BestMatches()

    async def keyword_candidates(self, terms: list[str], partitions: list[Partition], areas: tuple[Area, ...],
                                 filters: CandidateFilter, limit: int) -> list[tuple[Entry, int, float, float]]:
        if not terms:
            return []
        search = self._search(terms, areas, filters, limit)
        return await self._db.read(lambda conn: search(conn, partitions))

    async def readable_keyword_candidates(self, terms: list[str], areas: tuple[Area, ...], namespaces: tuple[str, ...],
                                          filters: CandidateFilter, limit: int
                                          ) -> tuple[list[Partition], list[tuple[Entry, int, float, float]]]:
        """`readable_partitions`, then `keyword_candidates` over them, in one read."""
        if not areas:
            return [], []
        search = self._search(terms, areas, filters, limit)

        def read(conn: sqlite3.Connection) -> tuple[list[Partition], list[tuple[Entry, int, float, float]]]:
            partitions = _partitions(conn, areas, namespaces)
            return partitions, search(conn, partitions) if partitions and terms else []

        return await self._db.read(read)

    def _search(self, terms: list[str], areas: tuple[Area, ...], filters: CandidateFilter, limit: int
                ) -> Callable[[sqlite3.Connection, list[Partition]], list[tuple[Entry, int, float, float]]]:
        stems = self._stemmer.terms(terms)
        width = len(ENTRY_COLUMNS)

        def search(conn: sqlite3.Connection, partitions: list[Partition]) -> list[tuple[Entry, int, float, float]]:
            where, params = _visibility(partitions, areas, filters)
            key = (tuple(partitions), areas, replace(filters, now=""))
            stats = self._stats
            match = fts_query(selective_terms(conn, terms, self._stemmer, stats=stats))
            rows = self._best(conn, match, where, params, limit, key)
            scores = rescore(conn, stems, [int(row[width]) for row in rows], self._stemmer, docs=_docs(rows, width),
                             stats=stats)
            return [(row_to_entry(row[:width]), int(row[width]), *scores.get(int(row[width]), (0.0, 0.0)))
                    for row in rows]

        return search

    async def keyword_scores(self, terms: list[str], seqs: list[int]) -> dict[int, tuple[float, float]]:
        if not terms or not seqs:
            return {}
        stems = self._stemmer.terms(terms)
        return await self._db.read(lambda conn: rescore(conn, stems, seqs, self._stemmer, stats=self._stats))

    async def visible_scored(self, entry_ids: list[str], partitions: list[Partition], areas: tuple[Area, ...],
                             filters: CandidateFilter, terms: list[str]
                             ) -> tuple[list[tuple[Entry, int]], dict[int, tuple[float, float]]]:
        """`visible_entries`, and `keyword_scores` of those (none without terms), in one read."""
        if not entry_ids:
            return [], {}
        where, params = _visibility(partitions, areas, filters)
        marks = ", ".join("?" for _ in entry_ids)
        sql = f"SELECT {COLUMNS}, e.rowid FROM entries e WHERE e.id IN ({marks}) AND {where}"
        stems = self._stemmer.terms(terms) if terms else []
        width = len(ENTRY_COLUMNS)

        def read(conn: sqlite3.Connection) -> tuple[list[tuple[Entry, int]], dict[int, tuple[float, float]]]:
            rows = conn.execute(sql, [*entry_ids, *params]).fetchall()
            found = [(row_to_entry(row[:width]), int(row[width])) for row in rows]
            return found, rescore(conn, stems, [seq for _, seq in found], self._stemmer, docs=_docs(rows, width),
                                  stats=self._stats)

        return await self._db.read(read)

    async def partitions_and_pending(self, areas: tuple[Area, ...], namespaces: tuple[str, ...],
                                     filters: CandidateFilter, limit: int
                                     ) -> tuple[list[Partition], tuple[list[tuple[Entry, int]], int]]:
        """`readable_partitions`, then `pending_entries` in them, in one read."""
        if not areas:
            return [], ([], 0)

        def read(conn: sqlite3.Connection) -> tuple[list[Partition], tuple[list[tuple[Entry, int]], int]]:
            partitions = _partitions(conn, areas, namespaces)
            return partitions, _pending(conn, partitions, areas, filters, limit) if partitions else ([], 0)

        return await self._db.read(read)
