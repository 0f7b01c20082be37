"""The scan: every detector over one text, the most specific first; a span claimed once is not
claimed again, and a secret wrapped onto the next line is followed there."""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from agent_memory.core.memories.secrets import commands, formats, named, places, prose
from agent_memory.core.memories.secrets.rules import Scan, compile_passes, run

# Tiers: formats (0), places (1), names and words (2); a span a lower tier claims is not claimed again.
PASSES = compile_passes(formats.RULES + places.RULES + commands.RULES + named.RULES + prose.RULES)
# The rest of a long value wrapped onto the next line (maybe quoted in a mail, `> `): that line
# holds nothing else, and no `=` but padding at its end (`SENTRY_ORG=acme` is an assignment).
_CONTINUED = re.compile(r"(?:\\?\r?\n|\\n)[ \t]*(?:>[ \t]*)*([A-Za-z0-9+/_-]{4,512}={0,2})[\"']?[ \t]*(?:\r?\n|\\n|$)")


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    start: int
    end: int


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


class _Claims:
    """Non-overlapping spans, kept sorted by start."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.found: list[Finding] = []

    def claim(self, kind: str, start: int, end: int) -> None:
        if end <= start:
            return
        at = bisect_left(self.starts, start)
        if at > 0 and self.found[at - 1].end > start or at < len(self.found) and self.found[at].start < end:
            return
        self.starts.insert(at, start)
        self.found.insert(at, Finding(kind, start, end))


def find_secrets(text: str) -> list[Finding]:
    """The secrets in `text`, in order, never overlapping (the more specific detector wins)."""
    if not text:
        return []
    raw = text.encode("ascii", "replace")  # one byte a character: positions are the text's
    # By tier, then position (the longer of two at one place first).
    found = sorted(run(PASSES, Scan(text, raw, raw.lower())), key=lambda f: (f[0], f[2], -f[3]))
    claims = _Claims()
    for _, kind, start, end in found:
        claims.claim(kind, start, end)
    return _continued(text, claims.found)


def _continued(text: str, found: list[Finding]) -> list[Finding]:
    """A long value that ends a line and goes on alone on the next one (a wrapped key) is
    redacted to its end (three lines at most)."""
    out = []
    for n, f in enumerate(found):
        end, lines = f.end, 0
        while end - f.start >= 20 and lines < 3:
            lines += 1
            m = _CONTINUED.match(text, end)
            if not m or not _random_tail(m.group(1)):
                break
            if n + 1 < len(found) and found[n + 1].start < m.end(1):
                break
            end = m.end(1)
        out.append(f if end == f.end else Finding(f.kind, f.start, end))
    return out


def _random_tail(value: str) -> bool:
    """Not a word on a line of its own (`Thanks`), but the characters of a key."""
    return any(c.isdigit() or c in "+/=_-" for c in value) or sum(c.isupper() for c in value[1:]) >= 2


def redact(text: str) -> tuple[str, int]:
    """`text` with every secret replaced by `[REDACTED:<kind>]`, and how many were replaced."""
    findings = find_secrets(text)
    if not findings:
        return text, 0
    parts, at = [], 0
    for f in findings:
        parts += [text[at:f.start], marker(f.kind)]
        at = f.end
    parts.append(text[at:])
    return "".join(parts), len(findings)
