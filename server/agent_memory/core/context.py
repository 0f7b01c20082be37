"""Near-duplicate removal, per-entry compression and the budgeted context block."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from agent_memory.core.models import Entry, Source

SENTENCE_END = re.compile(r"[.!?…](?=\s)")
ELLIPSIS = "…"
NORMAL = re.compile(r"[^\w]+", re.UNICODE)
T = TypeVar("T")


def fingerprint(text: str) -> str:
    return NORMAL.sub(" ", text.lower()).strip()


def near_duplicate(a: str, b: str, threshold: float = 0.9) -> bool:
    """Same words after normalising, or token sets overlapping at least `threshold` (Jaccard)."""
    return _similar(_shape(a), _shape(b), threshold)


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' normalised words (0 when either has none)."""
    return _jaccard(_shape(a)[1], _shape(b)[1])


def _jaccard(sa: set[str], sb: set[str]) -> float:
    return len(sa & sb) / len(sa | sb) if sa and sb else 0.0


def _shape(text: str) -> tuple[str, set[str]]:
    fa = fingerprint(text)
    return fa, set(fa.split())


def _similar(a: tuple[str, set[str]], b: tuple[str, set[str]], threshold: float) -> bool:
    (fa, sa), (fb, sb) = a, b
    if fa == fb:
        return True
    if not sa or not sb:
        return False
    small, large = sorted((len(sa), len(sb)))
    if small / large < threshold:  # the overlap can be no larger than the smaller set: never similar
        return False
    return _jaccard(sa, sb) >= threshold


def distinct(items: Iterable[T], text: Callable[[T], str], limit: int, threshold: float = 0.9) -> list[T]:
    """The first `limit` items (in order) whose text is no `near_duplicate` of an item kept
    before it; each text is normalised once."""
    kept: list[T] = []
    shapes: list[tuple[str, set[str]]] = []
    for item in items:
        if len(kept) >= limit:
            break
        shape = _shape(text(item))
        if any(_similar(shape, seen, threshold) for seen in shapes):
            continue
        kept.append(item)
        shapes.append(shape)
    return kept


def compress(entry: Entry, limit: int) -> tuple[str, bool]:
    """The entry's text for the prompt, at most `limit` characters; (text, truncated).

    Tool output keeps its head and tail (where the command and the verdict usually are);
    other text is cut at the last sentence boundary that fits, else at a word boundary.
    Storage is never changed.
    """
    text = " ".join(entry.content.split())
    if len(text) <= limit:
        return text, False
    if limit <= 1:
        return ELLIPSIS[:limit], True
    if entry.source is Source.TOOL:
        keep = limit - 3
        head = keep * 2 // 3
        return f"{text[:head].rstrip()} {ELLIPSIS} {text[len(text) - (keep - head):].lstrip()}"[:limit], True
    window = text[: limit - 1]
    ends = [m.end() for m in SENTENCE_END.finditer(window + " ")]
    if ends and ends[-1] >= limit // 3:
        return window[: ends[-1]].rstrip(), True
    cut = window.rsplit(" ", 1)[0] if " " in window else window
    return cut.rstrip() + ELLIPSIS, True


@dataclass(frozen=True, slots=True)
class ContextLine:
    entry: Entry
    text: str
    truncated: bool


def render_line(line: ContextLine) -> str:
    e = line.entry
    return f"- [{e.scope.value}/{e.layer.value} {e.id} {e.created_at[:10]}] {line.text}"


def assemble(lines: list[ContextLine], budget: int) -> tuple[str, list[ContextLine], int]:
    """Fit lines best-first into `budget` characters: (context, lines used, number dropped).
    A line that does not fit is dropped; smaller ones after it may still fit."""
    used: list[ContextLine] = []
    parts: list[str] = []
    size = 0
    dropped = 0
    for line in lines:
        rendered = render_line(line)
        extra = len(rendered) + (1 if parts else 0)
        if size + extra > budget:
            dropped += 1
            continue
        parts.append(rendered)
        used.append(line)
        size += extra
    return "\n".join(parts), used, dropped
