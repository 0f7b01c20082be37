"""The one place where visibility areas (`agent_memory.core.visibility`) become PostgreSQL SQL.

As on SQLite (`agent_memory.storage.sqlite.visibility`), namespaces are compared with `=` and a
half-open range, never `LIKE`: exact, case-sensitive, and `_` or `%` are ordinary characters. The
namespace columns are `COLLATE "C"` (byte order, whatever the database's locale), so every
namespace under `N` (`N/...`) sorts at or after `N/` and before `N0` ('0' follows '/').
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.core.visibility import Area

_AFTER_SLASH = chr(ord("/") + 1)


def subtree_bounds(namespace: str) -> tuple[str, str]:
    """[low, high) of every namespace strictly under `namespace`."""
    return namespace + "/", namespace + _AFTER_SLASH


def area_clause(areas: Sequence[Area], *, alias: str = "", owners: bool = True) -> tuple[str, list[object]]:
    """A parenthesised SQL condition (psycopg `%s` placeholders) true exactly for rows inside any
    of `areas`, and its parameters. No areas: a condition that is never true.

    Args:
        alias: table alias with its dot (`"e."`), or "".
        owners: False for tables without `owner_agent_id`/`team` (`partitions`); the owner, team
            and read-list conditions are then left to the entry-level query.
    """
    if not areas:
        return "(FALSE)", []
    ors: list[str] = []
    params: list[object] = []
    for area in areas:
        ands: list[str] = []
        if area.scope is not None:
            ands.append(f"{alias}scope = %s")
            params.append(area.scope.value)
        if area.namespace is not None:
            ns = f"{alias}namespace"
            if area.subtree:
                # One index range [N, N0) holding N and its subtree, then only N itself or [N/, N0).
                low, high = subtree_bounds(area.namespace)
                ands.append(f"{ns} >= %s AND {ns} < %s AND ({ns} = %s OR {ns} >= %s)")
                params += [area.namespace, high, area.namespace, low]
            else:
                ands.append(f"{ns} = %s")
                params.append(area.namespace)
        if owners and area.owner is not None:
            ands.append(f"{alias}owner_agent_id = %s")
            params.append(area.owner)
        if owners and area.team is not None:
            ands.append(f"{alias}team = %s")
            params.append(area.team)
        if owners and area.reader is not None:  # a read list (text[], NULL for none) naming the reader
            ands.append(f"({alias}read_agents IS NULL OR {alias}owner_agent_id = %s "
                        f"OR %s = ANY({alias}read_agents))")
            params += [area.reader, area.reader]
        ors.append("(" + (" AND ".join(ands) or "TRUE") + ")")
    return "(" + " OR ".join(ors) + ")", params
