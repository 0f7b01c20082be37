"""Nearest neighbours and similarities in `entry_vectors` (pgvector, cosine), within partitions.

pgvector's HNSW index (before 0.8's iterative scans) returns the `hnsw.ef_search` nearest vectors
of the whole table and only then applies the partition filter, so a small partition in a large
table would get few or no hits from it. Hence two plans, chosen per query:
- exact: every vector of the partitions, found through the (scope, namespace) index and ranked by
  distance (a materialized CTE keeps the planner off the HNSW index). Always complete; its cost
  grows with the partitions' size (about 1.5 ms per 1,000 vectors here), not the table's.
- HNSW: the index walked with `ef_search` raised so that, after the filter, about twice `limit`
  hits are expected (`ef_search = 2 * limit / share`, the share being the partitions' part of the
  table). Chosen when that `ef_search` is within pgvector's ceiling and cheaper than the exact
  plan (its cost grows with `ef_search`: about 2 ms at 200, 11 ms at 1,000 here); when it still
  comes back short, the exact plan answers. Approximate (recall@100 0.99 at 10,000), as Chroma's was.
tests/bench/bench_pg_vectors.py measures both: at 10,000 vectors, one partition of 100 takes 1 ms
exact (HNSW would find a third of it), all of them 15 ms exact or 2 ms by HNSW.

Counting the partitions' vectors to choose costs more than the HNSW walk itself on a large store
(24 ms for 100,000 in one partition, against 14 ms for the walk), so `PartitionSizes` remembers
each count for `SIZE_TTL_SECONDS`. A stale count only ever costs time: a plan chosen on it that
comes back short is answered by the exact plan.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from typing import Any

import psycopg

from agent_memory.core.ports import Partition

EF_SEARCH_MAX = 1000  # pgvector's own ceiling
OVERFETCH = 2.0  # ef_search covers twice the expected need after the filter
EXACT_PER_EF = 8  # the exact plan over 8 vectors costs about as much as one unit of ef_search (measured)

_PARTITIONS = 'SELECT * FROM unnest(%s::text[], %s::text[] COLLATE "C") AS p(scope, namespace)'


def _arrays(partitions: list[Partition]) -> tuple[list[str], list[str]]:
    return [p.scope for p in partitions], [p.namespace for p in partitions]


SIZE_TTL_SECONDS = 10.0
SIZE_CACHE = 1024  # partition sets remembered (most recently used)


def count_in(conn: psycopg.Connection, partitions: list[Partition]) -> int:
    row = conn.execute(f"SELECT count(*) FROM entry_vectors WHERE (scope, namespace) IN ({_PARTITIONS})",
                       _arrays(partitions)).fetchone()
    return int(row[0])


class PartitionSizes:
    """How many vectors a set of partitions holds, counted at most every `SIZE_TTL_SECONDS` per
    set (thread-safe: searches run on several worker threads)."""

    def __init__(self, ttl: float = SIZE_TTL_SECONDS) -> None:
        self._ttl = ttl
        self._lock = threading.Lock()
        self._counts: OrderedDict[tuple[tuple[str, str], ...], tuple[int, float]] = OrderedDict()

    def count(self, conn: psycopg.Connection, partitions: list[Partition]) -> int:
        key = tuple(sorted((p.scope, p.namespace) for p in partitions))
        now = time.monotonic()
        with self._lock:
            known = self._counts.get(key)
            if known is not None and now - known[1] < self._ttl:
                self._counts.move_to_end(key)
                return known[0]
        counted = count_in(conn, partitions)
        with self._lock:
            self._counts[key] = (counted, now)
            self._counts.move_to_end(key)
            while len(self._counts) > SIZE_CACHE:
                self._counts.popitem(last=False)
        return counted


def exact(conn: psycopg.Connection, vector: str, partitions: list[Partition], limit: int) -> list[tuple[str, float]]:
    rows = conn.execute(
        f"WITH found AS MATERIALIZED (SELECT entry_id, embedding <=> %s::vector AS distance FROM entry_vectors "
        f"WHERE (scope, namespace) IN ({_PARTITIONS})) "
        "SELECT entry_id, 1 - distance FROM found ORDER BY distance, entry_id LIMIT %s",
        (vector, *_arrays(partitions), limit)).fetchall()
    return [(row[0], float(row[1])) for row in rows]


def approximate(conn: psycopg.Connection, vector: str, partitions: list[Partition], limit: int,
                ef_search: int) -> list[tuple[str, float]]:
    """Through the HNSW index; needs a transaction (the `ef_search` setting is local to it)."""
    conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef_search),))
    keys = [f"{p.scope}:{p.namespace}" for p in partitions]  # a scope never holds ':': unambiguous
    rows = conn.execute(
        "SELECT entry_id, 1 - (embedding <=> %s::vector) FROM entry_vectors "
        "WHERE scope || ':' || namespace = ANY(%s) ORDER BY embedding <=> %s::vector LIMIT %s",
        (vector, keys, vector, limit)).fetchall()
    return [(row[0], float(row[1])) for row in rows]


def table_size(conn: psycopg.Connection) -> int:
    """The planner's estimate of the table's rows (no scan); -1 before its first ANALYZE."""
    row = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'entry_vectors'::regclass").fetchone()
    return int(row[0])


def plan(in_partitions: int, total: int, limit: int) -> int | None:
    """The `ef_search` for the HNSW plan, or None for the exact plan."""
    if in_partitions <= 0:
        return None
    ef_search = max(math.ceil(OVERFETCH * limit * max(total, in_partitions) / in_partitions), 40)
    return ef_search if ef_search <= min(EF_SEARCH_MAX, in_partitions / EXACT_PER_EF) else None


def nearest(conn: psycopg.Connection, vector: str, partitions: list[Partition], limit: int,
            sizes: PartitionSizes | None = None) -> list[tuple[str, float]]:
    """The `limit` vectors of `partitions` nearest to `vector`, as (entry id, cosine), inside the
    caller's (read-only) transaction; `sizes` remembers partition counts between calls."""
    total = table_size(conn)
    if plan(total, total, limit) is None:  # not even the whole table would be worth HNSW: no count needed
        return exact(conn, vector, partitions, limit)  # (-1 before the first ANALYZE: small, or not yet known)
    in_partitions = sizes.count(conn, partitions) if sizes is not None else count_in(conn, partitions)
    ef_search = plan(in_partitions, total, limit)
    if ef_search is not None:
        found = approximate(conn, vector, partitions, limit, ef_search)
        if len(found) >= min(limit, in_partitions):
            return found
    return exact(conn, vector, partitions, limit)


def similarities(conn: psycopg.Connection, vector: str, partitions: list[Partition] | None,
                 entry_ids: list[str]) -> dict[str, float]:
    """Cosine of `vector` to these entries' stored vectors (those indexed, in `partitions` when given)."""
    params: list[Any] = [vector, entry_ids]
    where = "entry_id = ANY(%s)"
    if partitions is not None:
        where += f" AND (scope, namespace) IN ({_PARTITIONS})"
        params.extend(_arrays(partitions))
    rows = conn.execute(f"SELECT entry_id, 1 - (embedding <=> %s::vector) FROM entry_vectors WHERE {where}",
                        params).fetchall()
    return {row[0]: float(row[1]) for row in rows}
