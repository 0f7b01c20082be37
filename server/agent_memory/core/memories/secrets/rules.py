"""How detectors are written and merged into few fast searches.

A rule is a regular expression that starts with a `lead`: a short literal (`ss`, `ok`, `eyJ`) or
a class of separators (`[_.~-]`). Rules with the same lead over the same text are one search
(`lead(?:rule1|rule2|...)`), so a scan costs one pass per lead, and a pass with a literal lead
runs at the speed of a literal search: the expression is tried only where the lead occurs, and
there the rule's lookbehind (`(?<=pass)`) or body turns a look-alike away at once.

The search holds no groups: a group costs at every place the search is tried (a group per rule
made a pass over dense near-matches three times slower), while a match is rare. Where the
search matches, the rules are tried there in their order, each as its own expression with its
groups, and the first that matches (the one the search matched) is handed its match.

The lowered text (`low`) serves the rules that read words (`password`, `token`), the raw text the
rules whose case matters (`AKIA`, `eyJ`); both are the text as one byte a character, so a
position in either is a position in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Found = Iterator[tuple[str, int, int]]  # (kind, start, end)

# Leads shared by rules in several modules. Where a lead is frequent (a separator, a colon), every
# rule of its pass starts with a character or a class of them, not a lookaround: the search then
# passes over a rule that cannot match there in one step (a lookbehind first costs as much as a
# whole small rule at every place the lead occurs).
COLON = ":"
DASH = r"\-"
DOT = r"\."


@dataclass(frozen=True, slots=True)
class Scan:
    """The text of one scan, and its two byte copies."""

    text: str
    raw: bytes  # the text as ASCII, one byte a character (others are `?`)
    low: bytes  # `raw` lowered


# A rule's match: its groups by name (a group that took no part starts at -1).
Groups = re.Match[bytes]


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
    literal: bytes  # what the lead starts with: a text without it is not searched
    rare: bytes  # the literal's least common character: a text without it lacks the literal
    regex: re.Pattern[bytes]  # the search: the lead and every rule's body, without groups
    rules: tuple[tuple[re.Pattern[bytes], Rule], ...]  # each rule's own expression, in order


def compile_passes(rules: tuple[Rule, ...]) -> tuple[Pass, ...]:
    """One search per (text, lead): `lead(?:rule1|rule2|...)`, its groups made plain."""
    by_lead: dict[tuple[str, str], list[Rule]] = {}
    for rule in rules:
        by_lead.setdefault((rule.on, rule.lead), []).append(rule)
    return tuple(Pass(on, _literal(lead), _rarest(_literal(lead)),
                      re.compile(f"{lead}(?:{'|'.join(plain(r.pattern) for r in members)})".encode()),
                      tuple((re.compile(f"{lead}(?:{r.pattern})".encode()), r) for r in members))
                 for (on, lead), members in by_lead.items())


def _literal(lead: str) -> bytes:
    """The literal characters a lead starts with (`\\-(?=...)` -> `-`)."""
    found = re.match(r"(?:\\.|[^\\()\[\]{}?*+|^$.])+", lead)
    return re.sub(r"\\(.)", r"\1", found.group()).encode() if found else b""


# Characters from the most to the least common in text and code (a rough order; any other is rarer).
_COMMON = b" etaoinsrhldcumfpgywb.vk,-_:/=\"')(xj\n0123456789q;>z<@[]{}?~\t"


def _rarest(literal: bytes) -> bytes:
    """The character of `literal` least common in text: one search for it (`memchr`) is much
    faster than a search for the literal, and most texts lack it (`q` of `sqlplus`)."""
    return bytes([max(literal, key=lambda c: _COMMON.find(bytes([c])) % (len(_COMMON) + 1))]) if literal else b""


def plain(pattern: str) -> str:
    """`pattern` with every capturing group made non-capturing (`(?P<v>x)`, `(x)` -> `(?:x)`)."""
    out, at, n = [], 0, len(pattern)
    in_class = False
    while at < n:
        c = pattern[at]
        if c == "\\":
            out.append(pattern[at:at + 2])
            at += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            out.append(c)
            at += 1
            if pattern[at:at + 1] == "^":
                out.append("^")
                at += 1
            if pattern[at:at + 1] == "]":  # a `]` first in a class is a member
                out.append("]")
                at += 1
            continue
        elif c == "(" and pattern.startswith("?P<", at + 1):
            out.append("(?:")
            at = pattern.index(">", at) + 1
            continue
        elif c == "(" and not pattern.startswith("?", at + 1):
            out.append("(?:")
            at += 1
            continue
        out.append(c)
        at += 1
    return "".join(out)


def run(passes: tuple[Pass, ...], scan: Scan) -> Iterator[tuple[int, str, int, int]]:
    """(tier, kind, start, end) of every finding of every pass."""
    for p in passes:
        data = scan.raw if p.on == "raw" else scan.low
        if p.rare not in data:  # most leads are absent from most texts: first their rarest character
            continue
        first = data.find(p.literal)
        if first < 0:
            continue
        for m in p.regex.finditer(data, first):
            at = m.start()
            for exact, rule in p.rules:
                hit = exact.match(data, at)
                if hit:
                    for kind, start, end in rule.handle(scan, hit, hit):
                        yield rule.tier, kind, start, end
                    break
