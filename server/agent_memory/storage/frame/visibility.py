"""The one place where visibility areas (`agent_memory.core.access.visibility`) become SQL, for either
store (its `Dialect` spells placeholders, truth and read lists).

Namespaces are compared with `=` and a half-open range, never `LIKE` (SQLite's folds ASCII case,
and both treat `_` and `%` as wildcards): with byte order (SQLite's BINARY collation, PostgreSQL's
`COLLATE "C"` namespace columns), every namespace under `N` (`N/...`) sorts at or after `N/` and
before `N0` ('0' is the character after '/'), so the range is exact, case-sensitive and uses the
index.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.core.access.visibility import Area
from agent_memory.storage.frame.dialect import Dialect

_AFTER_SLASH = chr(ord("/") + 1)


def subtree_bounds(namespace: str) -> tuple[str, str]:
    """[low, high) of every namespace strictly under `namespace`."""
    return namespace + "/", namespace + _AFTER_SLASH


def area_clause(d: Dialect, areas: Sequence[Area], *, alias: str = "", pinned: bool = False,
                owners: bool = True) -> tuple[str, list[object]]:
    """A parenthesised SQL condition true exactly for rows inside any of `areas`, and its
    parameters. No areas: a condition that is never true.

    Args:
        alias: table alias with its dot (`"e."`), or "".
        pinned: prefix columns with unary `+`, so SQLite does not pick an index for them when the
            rows are already pinned down by something cheaper (ids, an FTS match).
        owners: False for tables without `owner_agent_id`/`team` (the `partitions` table); the
            owner, team and read-list conditions are then left to the entry-level query.
    """
    if not areas:
        return f"({d.false})", []
    plus, mark = "+" if pinned else "", d.mark

    def col(name: str) -> str:
        return f"{plus}{alias}{name}"

    ors: list[str] = []
    params: list[object] = []
    for area in areas:
        ands: list[str] = []
        if area.scope is not None:
            ands.append(f"{col('scope')} = {mark}")
            params.append(area.scope.value)
        if area.namespace is not None:
            ns = col("namespace")
            if area.subtree:
                # One index range [N, N0) holding N and its subtree (and siblings such as N-x or
                # N.x, which sort before N/), then only N itself or [N/, N0): the database searches
                # the range instead of every row of the scope, as it did for `= N OR (>= N/ AND < N0)`.
                low, high = subtree_bounds(area.namespace)
                ands.append(f"{ns} >= {mark} AND {ns} < {mark} AND ({ns} = {mark} OR {ns} >= {mark})")
                params += [area.namespace, high, area.namespace, low]
            else:
                ands.append(f"{ns} = {mark}")
                params.append(area.namespace)
        if owners and area.owner is not None:
            ands.append(f"{col('owner_agent_id')} = {mark}")
            params.append(area.owner)
        if owners and area.team is not None:
            ands.append(f"{col('team')} = {mark}")
            params.append(area.team)
        if owners and area.reader is not None:
            clause, reader_params = d.reader_clause(alias, area.reader)
            ands.append(clause)
            params += reader_params
        ors.append("(" + (" AND ".join(ands) or d.true) + ")")
    return "(" + " OR ".join(ors) + ")", params
