"""How detectors are written and merged into few fast searches.

A rule is a regular expression that starts with a `lead`: a short literal (`ss`, `ok`, `eyJ`) or
a class of separators (`[_.~-]`). Rules with the same lead over the same text are one search
(`lead(?:rule1|rule2|...)`), so a scan costs one pass per lead, and a pass with a literal lead
runs at the speed of a literal search: the expression is tried only where the lead occurs, and
there the rule's lookbehind (`(?<=pass)`) or body turns a look-alike away at once.

The lowered text (`low`) serves the rules that read words (`password`, `token`), the raw text the
rules whose case matters (`AKIA`, `eyJ`); both are the text as one byte a character, so a
position in either is a position in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Found = Iterator[tuple[str, int, int]]  # (kind, start, end)


@dataclass(frozen=True, slots=True)
class Scan:
    """The text of one scan, and its two byte copies."""

    text: str
    raw: bytes  # the text as ASCII, one byte a character (others are `?`)
    low: bytes  # `raw` lowered


class Groups:
    """The groups of one rule inside a merged match (their names are the rule's own)."""

    __slots__ = ("m", "prefix")

    def __init__(self, m: re.Match[bytes], prefix: str) -> None:
        self.m, self.prefix = m, prefix

    def has(self, name: str) -> bool:
        return self.m.start(self.prefix + name) >= 0

    def start(self, name: str) -> int:
        return self.m.start(self.prefix + name)

    def end(self, name: str) -> int:
        return self.m.end(self.prefix + name)

    def span(self, name: str) -> tuple[int, int]:
        return self.m.span(self.prefix + name)

    def get(self, name: str) -> bytes | None:
        return self.m.group(self.prefix + name)


Handler = Callable[[Scan, re.Match[bytes], Groups], Found]


@dataclass(frozen=True, slots=True)
class Rule:
    """`lead` + `pattern` over `on` ("raw" or "low"); `handle` turns a match into findings.
    `tier` orders detectors: a span found by a lower tier is not claimed by a higher one."""

    on: str
    lead: str
    pattern: str
    handle: Handler
    tier: int


@dataclass(frozen=True, slots=True)
class Pass:
    on: str
    regex: re.Pattern[bytes]
    rules: dict[str, Rule]  # the rule of each outer group


def compile_passes(rules: tuple[Rule, ...]) -> tuple[Pass, ...]:
    """One search per (text, lead): `lead(?:(?P<r0>...)|(?P<r1>...))`, the rules' own groups
    renamed `r<n>_<name>`."""
    by_lead: dict[tuple[str, str], list[int]] = {}
    for n, rule in enumerate(rules):
        by_lead.setdefault((rule.on, rule.lead), []).append(n)
    passes = []
    for (on, lead), members in by_lead.items():
        alternatives = []
        for n in members:
            body = re.sub(r"\(\?P<(\w+)>", rf"(?P<r{n}_\1>", rules[n].pattern)
            body = re.sub(r"\(\?P=(\w+)\)", rf"(?P=r{n}_\1)", body)
            alternatives.append(f"(?P<r{n}>{body})")
        regex = re.compile(f"{lead}(?:{'|'.join(alternatives)})".encode())
        passes.append(Pass(on, regex, {f"r{n}": rules[n] for n in members}))
    return tuple(passes)


def run(passes: tuple[Pass, ...], scan: Scan) -> Iterator[tuple[int, str, int, int]]:
    """(tier, kind, start, end) of every finding of every pass."""
    for p in passes:
        for m in p.regex.finditer(scan.raw if p.on == "raw" else scan.low):
            name = m.lastgroup or ""
            rule = p.rules[name]
            for kind, start, end in rule.handle(scan, m, Groups(m, name + "_")):
                yield rule.tier, kind, start, end
