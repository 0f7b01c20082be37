"""What operators look at: the audit trail, store statistics, and warnings the server logged."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_memory.core.visibility import Area
from agent_memory.logging import LOG_FILE, LOG_FILE_BACKUPS
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.visibility import area_clause

AUDIT_COLUMNS = ("seq", "at", "request_id", "agent_id", "team", "system_type", "tool", "action", "scope",
                 "namespace", "entry_id", "outcome", "details")
SEEN_FILE = "warnings.seen"


async def audit_rows(db: Database, *, since: str | None = None, agent: str | None = None,
                     action: str | None = None, outcome: str | None = None, limit: int | None = None,
                     entry_id: str | None = None) -> list[dict[str, Any]]:
    where, params = [], []
    for column, value in (("at >= ", since), ("agent_id = ", agent), ("action = ", action), ("outcome = ", outcome),
                          ("entry_id = ", entry_id)):
        if value is not None:
            where.append(f"{column}?")
            params.append(value)
    sql = f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY at, seq"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    async with db.reading() as conn:
        rows = await conn.execute_fetchall(sql, params)
    out = []
    for row in rows:
        item = dict(zip(AUDIT_COLUMNS, row, strict=True))
        item["details"] = json.loads(item["details"] or "{}")
        out.append(item)
    return out


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return 0


async def store_stats(db: Database, *, sqlite_file: str | None, chroma_dir: Path | None,
                      areas: tuple[Area, ...] | None = None) -> dict[str, Any]:
    """Entries per scope, layer and namespace, sizes on disk and the vector outbox backlog. With
    `areas` (what one caller may read), only those entries are counted and no sizes are shown."""
    where, params = "", []
    if areas is not None:
        clause, params = area_clause(areas)
        where = f" WHERE {clause}"
    async with db.reading() as conn:
        grouped = list(await conn.execute_fetchall(
            f"SELECT scope, namespace, layer, COUNT(*), SUM(compacted), SUM(conflict) FROM entries{where} "
            "GROUP BY scope, namespace, layer", params))
        backlog = list(await conn.execute_fetchall("SELECT COUNT(*) FROM vector_outbox"))[0][0]
        vectors = list(await conn.execute_fetchall("SELECT COUNT(*) FROM entry_vectors"))[0][0]
    by_scope: Counter[str] = Counter()
    by_layer: Counter[str] = Counter()
    namespaces: dict[str, dict[str, Any]] = {}
    compacted = conflicts = 0
    for scope, namespace, layer, count, n_compacted, n_conflict in grouped:
        by_scope[scope] += count
        by_layer[layer] += count
        compacted += n_compacted or 0
        conflicts += n_conflict or 0
        slot = namespaces.setdefault(f"{scope}/{namespace}", {"scope": scope, "namespace": namespace, "entries": 0,
                                                              "layers": {}})
        slot["entries"] += count
        slot["layers"][layer] = count
    stats: dict[str, Any] = {
        "entries": sum(by_scope.values()),
        "by_scope": dict(sorted(by_scope.items())),
        "by_layer": dict(sorted(by_layer.items())),
        "compacted": compacted,
        "conflicts": conflicts,
        "namespaces": sorted(namespaces.values(), key=lambda n: (-n["entries"], n["scope"], n["namespace"])),
        "vector_outbox_backlog": int(backlog),
    }
    if areas is None:
        stats["vectors_in_sqlite"] = int(vectors)
        if sqlite_file and sqlite_file != ":memory:":
            base = Path(sqlite_file)
            stats["database_bytes"] = sum(_size(base.with_name(base.name + suffix)) for suffix in ("", "-wal", "-shm"))
        if chroma_dir is not None:
            stats["vector_index_bytes"] = _size(chroma_dir)
    return stats


@dataclass
class WarningsReport:
    since: str | None
    lines: list[dict[str, Any]] = field(default_factory=list)
    unreadable: int = 0

    def summary(self) -> list[tuple[str, str, int, str]]:
        """(level, event, count, last time) per kind, most frequent first."""
        counts: Counter[tuple[str, str]] = Counter()
        last: dict[tuple[str, str], str] = {}
        for line in self.lines:
            key = (str(line.get("level", "?")), str(line.get("event", "?")))
            counts[key] += 1
            last[key] = str(line.get("timestamp", ""))
        return [(level, event, n, last[(level, event)]) for (level, event), n in counts.most_common()]


def warnings_since_last_call(log_dir: Path, *, everything: bool = False, remember: bool = True) -> WarningsReport:
    """WARNING and ERROR lines logged since the previous call (or all kept, with `everything`);
    remembers how far it read in `<log_dir>/warnings.seen` (not with `remember=False`: the
    memory console shows what is new without marking it seen)."""
    seen_path = log_dir / SEEN_FILE
    since = None if everything or not seen_path.exists() else seen_path.read_text().strip() or None
    report = WarningsReport(since=since)
    files = [log_dir / f"{LOG_FILE}.{n}" for n in range(LOG_FILE_BACKUPS, 0, -1)] + [log_dir / LOG_FILE]
    newest = since
    for path in files:
        if not path.exists():
            continue
        for text in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                line = json.loads(text)
            except ValueError:
                report.unreadable += 1
                continue
            stamp = str(line.get("timestamp", ""))
            if since is not None and stamp <= since:
                continue
            report.lines.append(line)
            newest = max(newest or stamp, stamp)
    if remember and newest is not None and log_dir.exists():
        tmp = seen_path.with_suffix(".tmp")
        tmp.write_text(newest)
        os.replace(tmp, seen_path)
    return report
