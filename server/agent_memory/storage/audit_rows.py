"""Reading the audit table, dialect-neutral: the SELECT an `AuditQuery` asks for (with a
placeholder style) and the rows as the dicts the operator port returns."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agent_memory.core.ports import AUDIT_COLUMNS, AuditQuery


def audit_select(query: AuditQuery, mark: str) -> tuple[str, list[object]]:
    """The statement and its parameters, oldest first, with `mark` as the placeholder; with a
    limit, the newest `limit` rows (still oldest first)."""
    where, params = [], []
    for column, value in (("at >= ", query.since), ("agent_id = ", query.agent), ("action = ", query.action),
                          ("outcome = ", query.outcome), ("entry_id = ", query.entry_id)):
        if value is not None:
            where.append(f"{column}{mark}")
            params.append(value)
    sql = f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit"
    if where:
        sql += " WHERE " + " AND ".join(where)
    if query.limit is None:
        return sql + " ORDER BY at, seq", params
    columns = ", ".join(AUDIT_COLUMNS)
    newest = f"{sql} ORDER BY at DESC, seq DESC LIMIT {mark}"
    return f"SELECT {columns} FROM ({newest}) AS newest ORDER BY at, seq", [*params, int(query.limit)]


def audit_dicts(rows: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Each row as {column: value}, its details decoded."""
    out = []
    for row in rows:
        item = dict(zip(AUDIT_COLUMNS, row, strict=True))
        item["details"] = json.loads(item["details"] or "{}")
        out.append(item)
    return out
