"""What a format reader yields: a `Draft` (one memory read from another store, not yet placed in
this one) or a `Bad` (a line, record or file that cannot become one, and why).

Readers are pure: they read their input and yield these, in input order; they never touch the
store. `placement.place` turns a Draft into an Entry; `writer` stores it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime

from agent_memory.core.model.rules import MAX_TAG_CHARS
from agent_memory.core.model.text import not_utf8


@dataclass(frozen=True, slots=True)
class Draft:
    """One memory from another store.

    `where` names its place in the input (`line 3`, `record 2`, `notes/a.md`) for reports and audit.
    `key` is its identity in the source (an id, a path, an entity and observation): the entry id
    is derived from it, so importing the same input again finds the entries already there.
    `subspace` is appended under the target namespace (mem0's user/agent/run, a MemoryNode's scope
    path). `notes` say what of the source the reader could not keep (reported per item). The other fields
    are optional overrides of the target's defaults; dates are ISO-8601 text, checked at placement.
    """

    where: str
    key: str
    content: str
    tags: tuple[str, ...] = ()
    created_at: str | None = None
    updated_at: str | None = None
    expires_at: str | None = None
    layer: str | None = None
    priority: str | None = None
    confidence: float | None = None
    scope: str | None = None
    namespace: str | None = None
    team: str | None = None
    subspace: str | None = None
    session_id: str | None = None
    ttl_seconds: float | None = None  # counted from created_at when expires_at is not given
    domain: str | None = None  # one of core.model.models.Domain (a MemoryNode's metadata.domain)
    read_agents: tuple[str, ...] | None = None  # a read list; () restricts the entry to its owner
    notes: tuple[str, ...] = ()  # what the reader could not map (reported, the draft is still imported)


@dataclass(frozen=True, slots=True)
class Bad:
    where: str
    why: str


def clip_tag(text: str) -> str:
    """A tag from source text: whitespace runs folded to one space, at most the tag limit."""
    return " ".join(str(text).split())[:MAX_TAG_CHARS]


def tag_list(*groups: Iterable[str]) -> tuple[str, ...]:
    """Tags in order, clipped, empty ones and repeats dropped."""
    seen: dict[str, None] = {}
    for group in groups:
        for tag in group:
            clipped = clip_tag(tag)
            if clipped:
                seen.setdefault(clipped, None)
    return tuple(seen)


def stamp_text(value: object) -> str | None:
    """A date or date-time from JSON or YAML as ISO text (None when absent). Raises: ValueError."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, str):
        return value.strip()
    raise ValueError(f"a date must be ISO-8601 text, got {type(value).__name__}")


def json_lines(lines: Iterable[str]) -> Iterator[tuple[int, object | Bad]]:
    """Each non-blank line's number and its decoded JSON value, or a Bad saying why it is not JSON
    (or not UTF-8: the input is read with its undecodable bytes kept as lone surrogates)."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if not_utf8(line):
            yield number, Bad(f"line {number}", "not UTF-8 text")
            continue
        try:
            yield number, json.loads(line)
        except RecursionError:
            yield number, Bad(f"line {number}", "not JSON (nested too deeply)")
        except ValueError as exc:
            yield number, Bad(f"line {number}", f"not JSON ({json_problem(exc)})")


def json_problem(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    return "unreadable"
