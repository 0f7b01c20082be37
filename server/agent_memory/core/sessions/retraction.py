"""What a speaker takes back within one turn: "bump celery to 5.4, actually no, scrap that", "drop 3.9
from the matrix no wait, we still promise 3.9 until October", "use OnPush too, eh, we already
default to OnPush, never mind".

A retraction marker ("actually no", "no wait", "scrap that", "never mind", "nah", "hmm, actually",
"er,") withdraws what was just asked: the clause before it, or, when the marker stands alone after
a statement, the nearest request before that. What follows the marker is the correction ("half
height", "JSON lines by default"), which the engine keeps as a decision, unless it is only the
reason ("that'll hurt the small dim joins", "too disruptive") or a cancellation ("leave the theme
alone"); a marker followed by nothing but a reason hands the correction role to the next clause.
"""

from __future__ import annotations

import re
from enum import Enum

from agent_memory.core.sessions.worktalk import has_verb

_LEAD = r"(?:(?:hmm+|ok|okay|so|well|oh|eh)[,.]?\s+)*"
_STRONG = (r"actually,?\s+no|scrap that|scratch that|strike that|forget (?:it|that)|never ?mind|"
           r"no,?\s+wait|wait,?\s+no")
# Markers that only retract after something was said in the turn ("No." opening a turn is an answer).
_WEAK = r"nah\b|wait(?=[,.!]|\s*$)|actually\b|no(?=[,.!]|\s*$)|(?:er|erm|uh)(?=,)|hmm+,?\s+no\b"
_START = re.compile(rf"^{_LEAD}(?:(?:(?:{_STRONG})\b|{_WEAK})[,.!]*\s*)+", re.IGNORECASE)
_STRONG_START = re.compile(rf"^{_LEAD}(?:(?:{_STRONG})\b[,.!]*\s*)+", re.IGNORECASE)
_END = re.compile(rf"[,\s]+(?:{_STRONG})[.!]*$", re.IGNORECASE)
_REASON = re.compile(r"^(?:that'?s|that'll|that would|that is|it'?s too|it'd|too\b|because|since|as\b|not\b|"
                     r"no\b|just\b|nothing|never)", re.IGNORECASE)
_CANCEL = re.compile(r"^(?:leave\b|keep (?:it|them|that|the \w+) (?:as is|alone|the same)|don'?t bother|skip it)",
                     re.IGNORECASE)
_DIRECTIVE = re.compile(
    r"^(?:(?:also|and|then|just|please)\s+)*(?:let'?s|we'?ll|i'?ll|we will|add|bump|drop|set|switch|use|make|rename|"
    r"run|return|output|enable|disable|remove|delete|move|change|update|upgrade|pin|put|write|keep|go|try|do|"
    r"install|ship|turn|preload|split|merge|skip|mock|increase|decrease|raise|lower|cut|push|deploy|release)\b",
    re.IGNORECASE)


class State(Enum):
    KEPT = "kept"  # nothing taken back here: classify as usual
    WITHDRAWN = "withdrawn"  # taken back: never kept
    MARKER = "marker"  # the retraction itself, or only its reason: never kept
    CORRECTION = "correction"  # what was said instead: a decision, unless it says more


def is_directive(text: str) -> bool:
    """A request or a choice rather than a statement: an imperative, "let's", "we'll", or a bare
    fragment without a verb ("300ms", "redis", "warmup to 2000 as well")."""
    return bool(_DIRECTIVE.match(text.strip())) or not has_verb(text)


def settle(texts: list[str]) -> list[tuple[State, int]]:
    """For the clauses of one turn, in order: each one's state, and for a correction where its
    text begins (after the marker)."""
    out: list[tuple[State, int]] = [(State.KEPT, 0)] * len(texts)
    last_marker = -2

    def withdraw(index: int, reach: int) -> None:
        for back in range(index - 1, max(-1, index - 1 - reach), -1):
            if out[back][0] in (State.KEPT, State.CORRECTION) and (reach == 1 or is_directive(texts[back])):
                out[back] = (State.WITHDRAWN, 0)
                return

    for index, text in enumerate(texts):
        start = (_START if index else _STRONG_START).match(text)
        end = _END.search(text)
        if start is None and end is None:
            if last_marker == index - 1 and index and out[index - 1][0] is State.MARKER and is_directive(text) \
                    and not _REASON.match(text):
                out[index] = (State.CORRECTION, 0)  # "ok no, that's insane." + "errcheck and gosec to start"
            continue
        body_from = start.end() if start else 0
        body = text[body_from:end.start() if end else len(text)].strip(" ,.!")
        if end is not None and start is None and body and is_directive(body):
            out[index] = (State.WITHDRAWN, 0)  # "bump celery to 5.4, actually no, scrap that"
        elif last_marker != index - 1:
            withdraw(index, 1 if body and start else 2)
        if start is not None and body and not _REASON.match(body) and not _CANCEL.match(body):
            out[index] = (State.CORRECTION, body_from)
        elif start is not None or not body:
            out[index] = (State.MARKER, 0)
        last_marker = index
    return out
