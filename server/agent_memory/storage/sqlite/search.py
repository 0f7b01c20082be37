"""Retrieval queries on SQLite: readable partitions, FTS5 keyword candidates, visible entries."""

from __future__ import annotations

import sqlite3

from agent_memory.core.models import Entry
from agent_memory.core.query_terms import fts_query
from agent_memory.core.retrieval_ports import CandidateFilter, Partition
from agent_memory.core.visibility import Area
from agent_memory.storage.sqlite.bm25 import QueryStemmer, rescore, selective_terms
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.rows import ENTRY_COLUMNS, row_to_entry
from agent_memory.storage.sqlite.visibility import area_clause

COLUMNS = ", ".join(f"e.{c}" for c in ENTRY_COLUMNS)


def _visibility(partitions: list[Partition], areas: tuple[Area, ...], f: CandidateFilter) -> tuple[str, list[object]]:
    """WHERE clause (on alias e) for visible entries: in the partitions and the readable areas,
    unexpired, not conflict or compacted entries, and the request's filters."""
    pairs = ", ".join("(?, ?)" for _ in partitions)
    # Unary + keeps SQLite from scanning a whole partition through the namespace index when the
    # rows are already pinned down (by id, or by the FTS match).
    readable, readable_params = area_clause(areas, alias="e.", pinned=True)
    where = [f"(+e.scope, +e.namespace) IN (VALUES {pairs})", readable, "e.conflict = 0", "e.compacted = 0",
             "(e.expires_at IS NULL OR e.expires_at > ?)"]
    params: list[object] = [v for p in partitions for v in (p.scope, p.namespace)]
    params += [*readable_params, f.now]
    if f.layers:
        where.append(f"e.layer IN ({', '.join('?' for _ in f.layers)})")
        params += [layer.value for layer in f.layers]
    if f.session_id is not None:
        where.append("e.session_id = ?")
        params.append(f.session_id)
    if f.tags:
        marks = ", ".join("?" for _ in f.tags)
        where.append(f"(SELECT COUNT(DISTINCT value) FROM json_each(e.tags) WHERE value IN ({marks})) = ?")
        params += [*f.tags, len(f.tags)]
    return " AND ".join(where), params


class SqliteRetrievalStore:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._stemmer = QueryStemmer()

    async def readable_partitions(self, areas: tuple[Area, ...], namespaces: tuple[str, ...]) -> list[Partition]:
        if not areas:
            return []
        where, params = area_clause(areas, owners=False)
        sql = f"SELECT scope, namespace FROM partitions WHERE {where}"
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(sql, params)
        partitions = [Partition(scope, namespace) for scope, namespace in rows]
        if namespaces:
            partitions = [p for p in partitions if p.namespace in namespaces]
        return partitions

    async def keyword_candidates(self, terms: list[str], partitions: list[Partition], areas: tuple[Area, ...],
                                 filters: CandidateFilter, limit: int) -> list[tuple[Entry, int, float, float]]:
        if not terms:
            return []
        where, params = _visibility(partitions, areas, filters)
        sql = (f"SELECT {COLUMNS}, e.rowid FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid "
               f"WHERE entries_fts MATCH ? AND {where} ORDER BY bm25(entries_fts, 1.0, 0.5) LIMIT ?")
        stems = self._stemmer.terms(terms)
        width = len(ENTRY_COLUMNS)

        def search(conn: sqlite3.Connection) -> list[tuple[Entry, int, float, float]]:
            match = fts_query(selective_terms(conn, terms, self._stemmer))
            rows = conn.execute(sql, [match, *params, limit]).fetchall()
            scores = rescore(conn, stems, [int(row[width]) for row in rows])
            return [(row_to_entry(row[:width]), int(row[width]), *scores.get(int(row[width]), (0.0, 0.0)))
                    for row in rows]

        return await self._db.read(search)

    async def keyword_scores(self, terms: list[str], seqs: list[int]) -> dict[int, tuple[float, float]]:
        if not terms or not seqs:
            return {}
        stems = self._stemmer.terms(terms)
        return await self._db.read(lambda conn: rescore(conn, stems, seqs))

    async def visible_entries(self, entry_ids: list[str], partitions: list[Partition], areas: tuple[Area, ...],
                              filters: CandidateFilter) -> list[tuple[Entry, int]]:
        if not entry_ids:
            return []
        where, params = _visibility(partitions, areas, filters)
        marks = ", ".join("?" for _ in entry_ids)
        sql = f"SELECT {COLUMNS}, e.rowid FROM entries e WHERE e.id IN ({marks}) AND {where}"
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(sql, [*entry_ids, *params])
        width = len(ENTRY_COLUMNS)
        return [(row_to_entry(row[:width]), int(row[width])) for row in rows]

    async def pending_entries(self, partitions: list[Partition], areas: tuple[Area, ...], filters: CandidateFilter,
                              limit: int) -> tuple[list[tuple[Entry, int]], int]:
        """Visible entries whose vector is still waiting in the outbox (newest first, at most
        `limit`), and how many there are in all."""
        if not partitions:
            return [], 0
        where, params = _visibility(partitions, areas, filters)
        waiting = "e.id IN (SELECT entry_id FROM vector_outbox WHERE op = 'upsert')"
        async with self._db.reading() as conn:
            total = list(await conn.execute_fetchall(
                f"SELECT COUNT(*) FROM entries e WHERE {waiting} AND {where}", params))[0][0]
            rows = await conn.execute_fetchall(
                f"SELECT {COLUMNS}, e.rowid FROM entries e WHERE {waiting} AND {where} ORDER BY e.rowid DESC LIMIT ?",
                [*params, limit]) if total and limit else []
        width = len(ENTRY_COLUMNS)
        return [(row_to_entry(row[:width]), int(row[width])) for row in rows], int(total)
