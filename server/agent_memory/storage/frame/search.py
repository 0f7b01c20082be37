"""What both stores' retrieval queries share (`RetrievalStore`): which entries a request may see
(a WHERE clause on alias `e`), and the partitions it may read. The keyword search itself differs
(SQLite's FTS5, PostgreSQL's tsvector) and stays in each store's `search` module."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_memory.core.access.visibility import Area
from agent_memory.core.ports import CandidateFilter, Partition
from agent_memory.storage.frame.dialect import Dialect
from agent_memory.storage.frame.visibility import area_clause


def visibility(d: Dialect, partitions: list[Partition], areas: tuple[Area, ...], f: CandidateFilter
               ) -> tuple[str, list[object]]:
    """WHERE clause (on alias e) for visible entries: in the partitions and the readable areas,
    unexpired, not conflict or compacted entries, and the request's filters."""
    pin = d.pin
    in_partitions, params = d.in_partitions(partitions)
    readable, readable_params = area_clause(d, areas, alias="e.", pinned=bool(pin))
    where = [in_partitions, readable, d.flag("e.conflict", False), d.flag("e.compacted", False),
             f"(e.expires_at IS NULL OR e.expires_at > {d.mark})"]
    params += [*readable_params, f.now]
    if not f.include_superseded:
        where.append("e.superseded_by IS NULL")
    if f.since is not None:
        where.append(f"{pin}e.created_at >= {d.mark}")
        params.append(f.since)
    if f.until is not None:
        where.append(f"{pin}e.created_at < {d.mark}")
        params.append(f.until)
    for column, values in (("e.layer", f.layers), ("e.domain", f.domains)):
        if values:
            clause, values_params = d.in_list(column, [value.value for value in values])
            where.append(clause)
            params += values_params
    if f.session_id is not None:
        where.append(f"e.session_id = {d.mark}")
        params.append(f.session_id)
    if f.tags:
        tags, tags_params = d.tags_all("e.tags", f.tags)
        where.append(tags)
        params += tags_params
    return " AND ".join(where), params


def readable_partitions(d: Dialect, conn: Any, areas: tuple[Area, ...], namespaces: tuple[str, ...]
                        ) -> list[Partition]:
    """The partitions inside `areas` (only those of `namespaces`, when given)."""
    where, params = area_clause(d, areas, owners=False)
    rows = conn.execute(f"SELECT scope, namespace FROM partitions WHERE {where}", params).fetchall()
    partitions = [Partition(scope, namespace) for scope, namespace in rows]
    if namespaces:
        partitions = [p for p in partitions if p.namespace in namespaces]
    return partitions


# The keyword MATCH's word choice, the same on both stores (SQLite's `selective_terms`,
# PostgreSQL's `selective`): from this many entries on, only the rarest words are matched...
MIN_ENTRIES_TO_PRUNE = 5000
# ...and beyond the rarest two, the matched words may hold at most this many entries between them
# (the price in recall and the gain in speed are measured in docs/tools.md, How ranking works).
MATCH_BUDGET = 5000


def rarest(terms: list[str], df: Mapping[str, int], keep: int, most_each: float, budget: int) -> set[str]:
    """Which of `terms` a keyword MATCH takes (SQLite's `selective_terms`, PostgreSQL's
    `selective`): the `keep` rarest by `df` (entries holding each), then the next rarest while
    each is in at most `most_each` entries and all of those together in at most `budget`."""
    ordered = sorted(dict.fromkeys(terms), key=lambda term: df[term])
    chosen, held = set(ordered[:keep]), 0
    for term in ordered[keep:]:
        held += df[term]
        if df[term] > most_each or held > budget:
            break  # the rest are commoner still
        chosen.add(term)
    return chosen
