"""`agent-memory export` and `import`: every field of every entry as JSON lines, round trip lossless.

Export writes entries in storage order (the order they were written, which retrieval's neighbour
smoothing relies on), one JSON object a line with the fields of `schemas/memory_record.json` in
that order, non-ASCII text kept readable. Whatever a store holds can be written out: text no store
should hold (a NUL, a lone surrogate, which an older store may have taken) is written as its JSON
escape, and the import then names that line. Import checks every line against the rules a write
meets (shape, the text rule, scope/namespace, owner and team, content size, tags, confidence,
timestamps, version, references, an id not already stored: `core/memories/entry_checks.py`) and
inserts the entries as they are (ids, versions, etags, dates kept), queues them for the vector
index and audits each one (tool `import`). A bad line is reported with its line number;
`on_error="abort"` (the default) imports nothing when any line is bad, `"skip"` imports the others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from pydantic import ValidationError

from agent_memory.config import Settings
from agent_memory.contracts.crud import MemoryRecord
from agent_memory.contracts.records import entry_from_record, wire_record
from agent_memory.core.access.visibility import namespace_area
from agent_memory.core.memories.entry_checks import check_entry, misplaced_reference
from agent_memory.core.memories.writes import store_new
from agent_memory.core.model.clock import format_ts, utc_now
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.model.models import Entry, Scope
from agent_memory.core.model.rules import Limits
from agent_memory.core.model.text import check_text, not_utf8
from agent_memory.core.ports import EntryRepository, OperatorStore, WriteTransaction
from agent_memory.core.ports.failures import FailureReader
from agent_memory.ops.import_writer import ImportFailed, Unwind, import_event, run_batch

BATCH = 500
_SURROGATE = re.compile("[\ud800-\udfff]")


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
            out.write(export_line(entry) + "\n")
        written += len(page)
        last = page[-1][0]


def export_line(entry: Entry) -> str:
    """One entry as a JSON line, non-ASCII kept readable; a lone surrogate (which a store should
    not hold, but an older one may) written as its escape `\\udXXX`, so the line can be written as
    UTF-8 and reads back the same."""
    text = json.dumps(wire_record(entry), ensure_ascii=False)
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def parse_line(text: str, limits: Limits) -> Entry:
    """Raises: ValueError with a readable reason."""
    if not_utf8(text):
        raise ValueError("not UTF-8 text")
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("not JSON (nested too deeply)") from None
    except ValueError as exc:
        raise ValueError(f"not JSON ({getattr(exc, 'msg', 'unreadable')})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    try:
        check_text(data)  # NUL and lone surrogate escapes decode, but no store may hold them
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
        entry = entry_from_record(record, limits)
    except InvalidParams as exc:
        raise ValueError(exc.message) from None
    return check_entry(entry)


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield number, line


async def import_entries(settings: Settings, repo: EntryRepository, store: OperatorStore, lines: Iterable[str], *,
                         failures: FailureReader, on_error: str = "abort",
                         progress: Callable[[ImportReport], None] | None = None) -> ImportReport:
    """Check every line, then store the good entries (none when any is bad and `on_error` is
    "abort"). Raises: ImportFailed when the store stops taking entries (a full disk, a lost
    connection): the entries of earlier batches stay."""
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
    parsed = [(number, entry) for number, entry in parsed if entry.id not in stored]
    parsed = await _references_checked(repo, parsed, report)
    report.bad.sort()
    if report.bad and on_error == "abort":
        return report
    for start in range(0, len(parsed), BATCH):
        at = format_ts(utc_now())

        def work(tx: WriteTransaction, batch: list[tuple[int, Entry]], at: str = at) -> list[tuple[int, str]]:
            problems = []
            for number, entry in batch:
                if tx.get(entry.id) is not None:
                    problems.append((number, f"id {entry.id} is already stored"))
                    continue
                holder = tx.key_holder(entry) if entry.key is not None and not entry.conflict else None
                if holder is not None:
                    problems.append((number, f"key {entry.key!r} is already held by entry {holder} in "
                                             f"{entry.scope.value} {entry.namespace}"))
                    continue
                store_new(tx, entry, import_event(at, request_id, entry, line=number))
            failed = {number for number, _ in problems}
            done = [entry.id for number, entry in batch if number not in failed]
            if done:
                tx.mark_reflected(done, at)
            if problems and on_error == "abort":
                raise _Abort(problems)
            return problems

        batch = parsed[start:start + BATCH]
        try:
            problems, refused = await run_batch(repo, batch, work, failures=failures, carry_on=on_error != "abort")
        except _Abort as abort:
            report.bad += abort.problems
            return report
        except ImportFailed as exc:
            raise ImportFailed(f"{exc}; {report.imported} entries were imported before") from None
        report.bad += [(number, why) for number, _, why in refused]
        if refused and on_error == "abort":
            return report
        report.imported += len(batch) - len(refused) - len(problems or [])
        if progress is not None:
            progress(report)
    return report


async def _references_checked(repo: EntryRepository, parsed: list[tuple[int, Entry]], report: ImportReport
                              ) -> list[tuple[int, Entry]]:
    """`parsed` but the entries whose `conflict_of` or `superseded_by` names an entry of the store
    or of the import in another place (reported as bad)."""
    known = {entry.id: entry for _, entry in parsed}
    wanted = sorted({ref for _, entry in parsed for ref in (entry.conflict_of, entry.superseded_by)
                     if ref is not None and ref not in known})
    known |= await _stored(repo, wanted)
    kept = []
    for number, entry in parsed:
        if (why := misplaced_reference(entry, known)) is not None:
            report.bad.append((number, why))
        else:
            kept.append((number, entry))
    return kept


async def _stored(repo: EntryRepository, ids: Sequence[str]) -> dict[str, Entry]:
    found: dict[str, Entry] = {}
    for start in range(0, len(ids), BATCH):
        found |= await repo.get_many(ids[start:start + BATCH])
    return found


class _Abort(Unwind):
    def __init__(self, problems: list[tuple[int, str]]) -> None:
        super().__init__("abort")
        self.problems = problems
