"""`agent-memory export` and `import`: every field of every entry as JSON lines, round trip lossless.

Export writes entries in storage order (the order they were written, which retrieval's neighbour
smoothing relies on), one JSON object a line with the fields of `schemas/memory_record.json` in
that order, non-ASCII text kept readable. Import checks every line against the same rules the
server applies (shape, scope/namespace, team, content size, tags, confidence, timestamps, an id
not already stored) and inserts the entries as they are (ids, versions, etags, dates kept), queues
them for the vector index and audits each one (tool `import`). A bad line is reported with its
line number; `on_error="abort"` (the default) imports nothing when any line is bad, `"skip"`
imports the others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TextIO

from pydantic import ValidationError

from agent_memory.config import Settings
from agent_memory.core.clock import format_ts, utc_now
from agent_memory.core.errors import InvalidParams
from agent_memory.core.ids import new_request_id
from agent_memory.core.models import AuditEvent, Entry, Layer, Priority, Scope, Source
from agent_memory.core.ports import EntryRepository, OperatorStore, WriteTransaction
from agent_memory.core.rules import (
    Limits,
    check_confidence,
    check_content,
    check_namespace,
    check_tags,
    normalise_timestamp,
)
from agent_memory.core.sessions import check_session_id
from agent_memory.core.visibility import namespace_area
from agent_memory.tools.contracts import MemoryRecord
from agent_memory.tools.errors import check_unicode
from agent_memory.tools.records import wire_record

BATCH = 500
ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


@dataclass
class ImportReport:
    read: int = 0
    imported: int = 0
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line number, why)


async def export_entries(store: OperatorStore, out: TextIO, *, scope: str | None = None,
                         namespace: str | None = None, cascade: bool = False) -> int:
    area = namespace_area(Scope(scope) if scope else None, namespace or None, cascade=cascade) \
        if scope or namespace else None
    written, last = 0, 0
    while True:  # pages in storage order, so a big store never sits in memory at once
        page = await store.entries_after(area, last, BATCH)
        if not page:
            return written
        for _, entry in page:
            out.write(json.dumps(wire_record(entry), ensure_ascii=False) + "\n")
        written += len(page)
        last = page[-1][0]


def parse_line(text: str, limits: Limits) -> Entry:
    """Raises: ValueError with a readable reason."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("not JSON (nested too deeply)") from None
    except ValueError as exc:
        raise ValueError(f"not JSON ({getattr(exc, 'msg', 'unreadable')})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    try:
        check_unicode(data)  # a lone surrogate escape decodes, but SQLite cannot store it
    except InvalidParams as exc:
        raise ValueError(exc.message) from None
    data.setdefault("compacted", False)
    try:
        record = MemoryRecord.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        raise ValueError(f"{where}: {first['msg']}") from None
    extra = set(data) - set(MemoryRecord.model_fields)
    if extra:
        raise ValueError(f"unknown field {sorted(extra)[0]}")
    try:
        return _entry(record, limits)
    except InvalidParams as exc:
        raise ValueError(exc.message) from None


def _entry(r: MemoryRecord, limits: Limits) -> Entry:
    if not ID_PATTERN.match(r.id):
        raise InvalidParams("id must be 1-128 characters of [A-Za-z0-9_.:-]")
    scope = Scope(r.scope)
    if scope is Scope.GLOBAL and r.team is not None or scope is not Scope.GLOBAL and not r.team:
        raise InvalidParams("team must be null for global entries and set for agent and team entries")
    check_namespace(r.namespace)
    if r.session_id is not None:
        check_session_id(r.session_id)
    if r.version < 1 or not r.etag:
        raise InvalidParams("version must be 1 or more and etag non-empty")
    stamps = {name: normalise_timestamp(value, name) if value else None
              for name, value in (("created_at", r.created_at), ("updated_at", r.updated_at),
                                  ("expires_at", r.expires_at))}
    if stamps["created_at"] is None or stamps["updated_at"] is None:
        raise InvalidParams("created_at and updated_at are required")
    return Entry(
        id=r.id, scope=scope, namespace=r.namespace, team=r.team, owner_agent_id=r.owner_agent_id,
        content=check_content(r.content, limits), tags=check_tags(tuple(r.tags)), priority=Priority(r.priority),
        source=Source(r.source), confidence=check_confidence(r.confidence), layer=Layer(r.layer),
        created_at=stamps["created_at"], updated_at=stamps["updated_at"], expires_at=stamps["expires_at"],
        version=r.version, etag=r.etag, conflict=r.conflict, conflict_of=r.conflict_of, session_id=r.session_id,
        promoted_from=r.promoted_from, compacted=r.compacted, superseded_by=r.superseded_by,
    )


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield number, line


async def import_entries(settings: Settings, repo: EntryRepository, store: OperatorStore, lines: Iterable[str], *,
                         on_error: str = "abort", progress: Callable[[ImportReport], None] | None = None
                         ) -> ImportReport:
    limits = Limits(max_content_chars=settings.max_content_chars)
    report = ImportReport()
    request_id = new_request_id()
    parsed: list[tuple[int, Entry]] = []
    seen: set[str] = set()
    for number, line in _numbered(lines):
        report.read += 1
        try:
            entry = parse_line(line, limits)
            if entry.id in seen:
                raise ValueError(f"id {entry.id} appears twice in the input")
            seen.add(entry.id)
            parsed.append((number, entry))
        except ValueError as exc:
            report.bad.append((number, str(exc)))
    stored = await store.stored_ids([entry.id for _, entry in parsed])
    report.bad += [(number, f"id {entry.id} is already stored") for number, entry in parsed if entry.id in stored]
    report.bad.sort()
    parsed = [(number, entry) for number, entry in parsed if entry.id not in stored]
    if report.bad and on_error == "abort":
        return report
    for start in range(0, len(parsed), BATCH):
        batch = parsed[start:start + BATCH]
        at = format_ts(utc_now())

        def work(tx: WriteTransaction, batch: list[tuple[int, Entry]] = batch, at: str = at
                 ) -> list[tuple[int, str]]:
            problems = []
            for number, entry in batch:
                if tx.get(entry.id) is not None:
                    problems.append((number, f"id {entry.id} is already stored"))
                    continue
                tx.insert(entry)
                tx.enqueue_vector(entry, "upsert")
                tx.audit(AuditEvent(at=at, request_id=request_id, agent_id="operator", team="", system_type="sys5",
                                    tool="import", action="import", scope=entry.scope.value,
                                    namespace=entry.namespace, entry_id=entry.id, outcome="ok",
                                    details={"line": number}))
            done = [entry.id for number, entry in batch if (number, f"id {entry.id} is already stored") not in problems]
            if done:
                tx.mark_reflected(done, at)
            if problems and on_error == "abort":
                raise _Abort(problems)
            return problems

        try:
            problems = await repo.transact(work)
        except _Abort as abort:
            report.bad += abort.problems
            return report
        report.bad += problems
        report.imported += len(batch) - len(problems)
        if progress is not None:
            progress(report)
    return report


class _Abort(Exception):
    def __init__(self, problems: list[tuple[int, str]]) -> None:
        super().__init__("abort")
        self.problems = problems
