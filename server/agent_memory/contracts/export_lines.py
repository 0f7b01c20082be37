"""The export format: one JSON object a line per entry, with the fields of
`schemas/memory_record.json` in that order (the wire record, `contracts/records.py`), non-ASCII text
kept readable. Whatever a store holds can be written out: text no store should hold (a NUL, a lone
surrogate, which an older store may have taken) is written as its JSON escape, and reading it back
names that line. Reading checks every line against the rules a write meets (shape, the text rule,
scope/namespace, owner and team, content size, tags, confidence, timestamps, version:
`core/memories/entry_checks.py`); the restore (`application/transfer.py`) checks the rest against
the store."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from pydantic import ValidationError

from agent_memory.application.transfer import ImportReport
from agent_memory.contracts.crud import MemoryRecord
from agent_memory.contracts.records import entry_from_record, wire_record
from agent_memory.core.memories.entry_checks import check_entry
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.models import Entry
from agent_memory.core.model.rules import Limits
from agent_memory.core.model.text import check_text, not_utf8

_SURROGATE = re.compile("[\ud800-\udfff]")


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


def read_lines(lines: Iterable[str], limits: Limits, report: ImportReport) -> list[tuple[int, Entry]]:
    """The entries of an export's lines, numbered from 1 (blank lines skipped); each bad line (or an
    id it repeats) is counted in `report` with its number and why, and left out."""
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
    return parsed
