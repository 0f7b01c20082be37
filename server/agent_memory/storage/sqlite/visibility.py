"""The one place where visibility areas (`agent_memory.core.visibility`) become SQL.

Namespaces are compared with `=` and a half-open range, never `LIKE`: SQLite's `LIKE` folds ASCII
case (so `RED/ops` would match `red/%`) and treats `_` and `%` as wildcards. With the default
BINARY collation, every namespace under `N` (`N/...`) sorts at or after `N/` and before `N0`
('0' is the character after '/'), so the range is exact, case-sensitive and uses the index.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.core.visibility import Area

_AFTER_SLASH = chr(ord("/") + 1)


def subtree_bounds(namespace: str) -> tuple[str, str]:
    """[low, high) of every namespace strictly under `namespace`."""
    return namespace + "/", namespace + _AFTER_SLASH


def area_clause(areas: Sequence[Area], *, alias: str = "", pinned: bool = False,
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
        return "(0)", []
    plus = "+" if pinned else ""

    def col(name: str) -> str:
        return f"{plus}{alias}{name}"

    ors: list[str] = []
    params: list[object] = []
    for area in areas:
        ands: list[str] = []
        if area.scope is not None:
            ands.append(f"{col('scope')} = ?")
            params.append(area.scope.value)
        if area.namespace is not None:
            if area.subtree:
                # One index range [N, N0) holding N and its subtree (and siblings such as N-x or
                # N.x, which sort before N/), then only N itself or [N/, N0): SQLite searches the
                # range instead of every row of the scope, as it did for `= N OR (>= N/ AND < N0)`.
                low, high = subtree_bounds(area.namespace)
                ns = col("namespace")
                ands.append(f"{ns} >= ? AND {ns} < ? AND ({ns} = ? OR {ns} >= ?)")
                params += [area.namespace, high, area.namespace, low]
            else:
                ands.append(f"{col('namespace')} = ?")
                params.append(area.namespace)
        if owners and area.owner is not None:
            ands.append(f"{col('owner_agent_id')} = ?")
            params.append(area.owner)
        if owners and area.team is not None:
            ands.append(f"{col('team')} = ?")
            params.append(area.team)
        if owners and area.reader is not None:
            # A read list is JSON text of agent ids (which hold no '"'), NULL for none: the common
            # case is one IS NULL; instr is exact and case-sensitive.
            ands.append(f"({alias}read_agents IS NULL OR {alias}owner_agent_id = ? "
                        f"OR instr({alias}read_agents, ?) > 0)")
            params += [area.reader, f'"{area.reader}"']
        ors.append("(" + (" AND ".join(ands) or "1") + ")")
    return "(" + " OR ".join(ors) + ")", params
