"""Retrieval queries on PostgreSQL: readable partitions, keyword candidates over the `search`
tsvector (ranked and scored as SQLite's, `agent_memory.storage.postgres.bm25`), visible entries,
and the entries still waiting for the vector index.

Query words are never tsquery syntax: each is tokenised by the server (`to_tsvector`) and only the
lexemes it yields are put, quoted, into a tsquery. Reads of several statements run in one
repeatable-read snapshot, so the statistics, the candidates and their scores agree.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from agent_memory.core.access.visibility import Area
from agent_memory.core.model.models import Entry
from agent_memory.core.ports import CandidateFilter, Partition
from agent_memory.storage.frame.search import readable_partitions, visibility
from agent_memory.storage.postgres.bm25 import (
    CommonTerms,
    Lexemes,
    any_of,
    idf,
    rescore,
    selective,
    term_stats,
    tsquery_term,
)
from agent_memory.storage.postgres.database import PostgresDatabase
from agent_memory.storage.postgres.dialect import POSTGRES
from agent_memory.storage.postgres.rows import ENTRY_COLUMNS, row_to_entry

COLUMNS = ", ".join(f"e.{c}" for c in ENTRY_COLUMNS)
WIDTH = len(ENTRY_COLUMNS)
Scored = tuple[Entry, int, float, float]


def _visibility(partitions: list[Partition], areas: tuple[Area, ...], f: CandidateFilter) -> tuple[str, list[object]]:
    return visibility(POSTGRES, partitions, areas, f)


def _partitions(conn: psycopg.Connection, areas: tuple[Area, ...], namespaces: tuple[str, ...]) -> list[Partition]:
    return readable_partitions(POSTGRES, conn, areas, namespaces)


def _pending(conn: psycopg.Connection, partitions: list[Partition], areas: tuple[Area, ...],
             filters: CandidateFilter, limit: int) -> tuple[list[tuple[Entry, int]], int]:
    where, params = _visibility(partitions, areas, filters)
    # From the outbox to the entries, never the other way: the outbox is usually empty, but after
    # a drain its statistics still say otherwise until autovacuum comes, and the planner then walked
    # every entry probing the outbox for each (200 ms at 100,000 entries, against under 1 ms).
    waiting = ("WITH waiting AS MATERIALIZED (SELECT DISTINCT entry_id FROM vector_outbox WHERE op = 'upsert') "
               "SELECT {} FROM waiting w JOIN entries e ON e.id = w.entry_id")
    if not limit:
        return [], int(conn.execute(f"{waiting.format('count(*)')} WHERE {where}", params).fetchone()[0])
    # One statement, so the count and the rows are one snapshot: the vector applier may apply the
    # outbox between two statements (a count of 1 with no rows once read as "not covered").
    rows = conn.execute(f"{waiting.format(f'{COLUMNS}, e.seq, count(*) OVER ()')} WHERE {where} "
                        f"ORDER BY e.seq DESC LIMIT %s", [*params, limit]).fetchall()
    total = int(rows[0][WIDTH + 1]) if rows else 0
    return [(row_to_entry(row[:WIDTH]), int(row[WIDTH])) for row in rows], total


class PostgresRetrievalStore:
    """The `RetrievalStore` port on PostgreSQL."""

    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db
        self._lexemes = Lexemes()
        self._common = CommonTerms()

    def _weights(self, conn: psycopg.Connection, terms: list[str]) -> tuple[dict[str, float], dict[str, int], int]:
        """Each query lexeme's IDF, its document frequency, and N."""
        lexemes = sorted({lex for found in self._lexemes.of(conn, terms).values() for lex in found})
        if not lexemes:
            return {}, {}, 1
        total, df = term_stats(conn, lexemes, self._common)
        return idf(total, df), df, total

    async def keyword_candidates(self, terms: list[str], partitions: list[Partition], areas: tuple[Area, ...],
                                 filters: CandidateFilter, limit: int) -> list[Scored]:
        if not terms or not partitions or not areas:
            return []
        search = self._search(terms, areas, filters, limit)
        return await self._db.read(lambda conn: search(conn, partitions), snapshot=True)

    async def readable_keyword_candidates(self, terms: list[str], areas: tuple[Area, ...], namespaces: tuple[str, ...],
                                          filters: CandidateFilter, limit: int
                                          ) -> tuple[list[Partition], list[Scored]]:
        """`readable_partitions`, then `keyword_candidates` over them, in one read."""
        if not areas:
            return [], []
        search = self._search(terms, areas, filters, limit)

        def read(conn: psycopg.Connection) -> tuple[list[Partition], list[Scored]]:
            partitions = _partitions(conn, areas, namespaces)
            return partitions, search(conn, partitions) if partitions and terms else []

        return await self._db.read(read, snapshot=True)

    def _search(self, terms: list[str], areas: tuple[Area, ...], filters: CandidateFilter, limit: int
                ) -> Callable[[psycopg.Connection, list[Partition]], list[Scored]]:
        def search(conn: psycopg.Connection, partitions: list[Partition]) -> list[Scored]:
            weights, df, total = self._weights(conn, terms)
            if not weights:
                return []
            where, params = _visibility(partitions, areas, filters)
            lexemes = sorted(weights)
            # Best first by an IDF-weighted sum of ts_rank per lexeme (ts_rank saturates with the
            # term's count much as BM25 does, but knows no IDF), then the exact BM25 of those.
            order = " + ".join("%s * ts_rank(e.search, %s::tsquery)" for _ in lexemes)
            order_params = [v for lex in lexemes for v in (weights[lex], tsquery_term(lex))]
            rows = conn.execute(
                f"SELECT {COLUMNS}, e.seq FROM entries e WHERE e.search @@ %s::tsquery AND {where} "
                f"ORDER BY {order} DESC, e.seq DESC LIMIT %s",
                [any_of(selective(lexemes, df, total)), *params, *order_params, limit],
                prepare=False).fetchall()  # planned for these terms and areas, never a generic plan
            scores = rescore(conn, weights, [int(row[WIDTH]) for row in rows])
            found = [(row_to_entry(row[:WIDTH]), int(row[WIDTH]), *scores.get(int(row[WIDTH]), (0.0, 0.0)))
                     for row in rows]
            return sorted(found, key=lambda hit: -hit[2])  # stable: ts_rank's order among equal scores

        return search

    async def keyword_scores(self, terms: list[str], seqs: list[int]) -> dict[int, tuple[float, float]]:
        if not terms or not seqs:
            return {}

        def read(conn: psycopg.Connection) -> dict[int, tuple[float, float]]:
            return rescore(conn, self._weights(conn, terms)[0], seqs)

        return await self._db.read(read, snapshot=True)

    async def visible_scored(self, entry_ids: list[str], partitions: list[Partition], areas: tuple[Area, ...],
                             filters: CandidateFilter, terms: list[str]
                             ) -> tuple[list[tuple[Entry, int]], dict[int, tuple[float, float]]]:
        """`visible_entries`, and `keyword_scores` of those (none without terms), in one read."""
        if not entry_ids or not partitions or not areas:
            return [], {}
        where, params = _visibility(partitions, areas, filters)
        sql = f"SELECT {COLUMNS}, e.seq FROM entries e WHERE e.id = ANY(%s) AND {where}"

        def read(conn: psycopg.Connection) -> tuple[list[tuple[Entry, int]], dict[int, tuple[float, float]]]:
            found = [(row_to_entry(row[:WIDTH]), int(row[WIDTH]))
                     for row in conn.execute(sql, [list(entry_ids), *params])]
            if not terms or not found:
                return found, {}
            return found, rescore(conn, self._weights(conn, terms)[0], [seq for _, seq in found])

        return await self._db.read(read, snapshot=bool(terms))

    async def partitions_and_pending(self, areas: tuple[Area, ...], namespaces: tuple[str, ...],
                                     filters: CandidateFilter, limit: int
                                     ) -> tuple[list[Partition], tuple[list[tuple[Entry, int]], int]]:
        """`readable_partitions`, then `pending_entries` in them, from one snapshot (a
        repeatable-read transaction; the count and the rows are besides one statement)."""
        if not areas:
            return [], ([], 0)

        def read(conn: psycopg.Connection) -> tuple[list[Partition], tuple[list[tuple[Entry, int]], int]]:
            partitions = _partitions(conn, areas, namespaces)
            return partitions, _pending(conn, partitions, areas, filters, limit) if partitions else ([], 0)

        return await self._db.read(read, snapshot=True)
