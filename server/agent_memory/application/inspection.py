"""What operators look at: store statistics, and warnings the server logged (the audit trail is
`OperatorStore.audit_rows`)."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_memory.core.access.visibility import Area
from agent_memory.core.ports import OperatorStore
from agent_memory.logging import LOG_FILE, LOG_FILE_BACKUPS

SEEN_FILE = "warnings.seen"


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return 0


async def store_stats(store: OperatorStore, *, chroma_dir: Path | None,
                      areas: tuple[Area, ...] | None = None) -> dict[str, Any]:
    """Entries per scope, layer and namespace, sizes on disk and the vector outbox backlog. With
    `areas` (what one caller may read), only those entries and their queued vector changes are
    counted and no sizes are shown."""
    by_scope: Counter[str] = Counter()
    by_layer: Counter[str] = Counter()
    namespaces: dict[str, dict[str, Any]] = {}
    compacted = conflicts = 0
    for count in await store.partition_counts(areas):
        by_scope[count.scope] += count.entries
        by_layer[count.layer] += count.entries
        compacted += count.compacted
        conflicts += count.conflicts
        slot = namespaces.setdefault(f"{count.scope}/{count.namespace}", {
            "scope": count.scope, "namespace": count.namespace, "entries": 0, "layers": {}})
        slot["entries"] += count.entries
        slot["layers"][count.layer] = count.entries
    stats: dict[str, Any] = {
        "entries": sum(by_scope.values()),
        "by_scope": dict(sorted(by_scope.items())),
        "by_layer": dict(sorted(by_layer.items())),
        "compacted": compacted,
        "conflicts": conflicts,
        "namespaces": sorted(namespaces.values(), key=lambda n: (-n["entries"], n["scope"], n["namespace"])),
        "vector_outbox_backlog": await store.vector_backlog(areas),
    }
    if areas is None:
        stats["vectors_in_sqlite"] = await store.stored_vectors()
        database_bytes = await store.storage_bytes()
        if database_bytes is not None:
            stats["database_bytes"] = database_bytes
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
        return [(level, event, n, last) for (level, event), n, last in self.counted("level", "event")]

    def counted(self, *fields: str) -> list[tuple[tuple[str, ...], int, str]]:
        """(the values of `fields`, count, last time) per distinct values, most frequent first."""
        counts: Counter[tuple[str, ...]] = Counter()
        last: dict[tuple[str, ...], str] = {}
        for line in self.lines:
            key = tuple(str(line.get(name, "?")) for name in fields)
            counts[key] += 1
            last[key] = str(line.get("timestamp", ""))
        return [(key, n, last[key]) for key, n in counts.most_common()]


def warnings_since_last_call(log_dir: Path, *, everything: bool = False, remember: bool = True) -> WarningsReport:
    """WARNING and ERROR lines logged since the previous call (or all kept, with `everything`);
    remembers how far it read in `<log_dir>/warnings.seen` (not with `remember=False`: the
    memory console shows what is new without marking it seen)."""
    files = [log_dir / f"{LOG_FILE}.{n}" for n in range(LOG_FILE_BACKUPS, 0, -1)] + [log_dir / LOG_FILE]
    return lines_since_last_call(files, log_dir / SEEN_FILE, everything=everything, remember=remember)


def hook_failures_since_last_call(failures: Path, *, everything: bool = False) -> WarningsReport:
    """The failures `agent-memory hook` recorded in `failures` (this user's, see
    `hooks.client.record_failure`; its previous file beside it as `.1`) since the previous call,
    or all kept; the mark is kept beside them as `.seen`."""
    return lines_since_last_call([failures.with_name(failures.name + ".1"), failures],
                                 failures.with_name(failures.name + ".seen"), everything=everything)


def lines_since_last_call(files: list[Path], seen_path: Path, *, everything: bool = False,
                          remember: bool = True) -> WarningsReport:
    """The JSON lines of `files` (oldest first) stamped after the stamp kept in `seen_path` (all,
    with `everything`); keeps the newest stamp read there unless `remember` is False."""
    since = None if everything or not seen_path.exists() else seen_path.read_text().strip() or None
    report = WarningsReport(since=since)
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
            if not isinstance(line, dict):
                report.unreadable += 1
                continue
            stamp = str(line.get("timestamp", ""))
            if since is not None and stamp <= since:
                continue
            report.lines.append(line)
            newest = max(newest or stamp, stamp)
    if remember and newest is not None and seen_path.parent.exists():
        tmp = seen_path.with_suffix(".tmp")
        tmp.write_text(newest)
        os.replace(tmp, seen_path)
    return report
