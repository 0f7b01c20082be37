"""How a new fact or rule relates to the ones an agent already holds: the same thing said again
(reinforce it), a change of mind about the same subject (supersede the old one), or something
new (store it). Pure: similarities come from the caller (the embedder's cosine, or word overlap
when the model is not loaded).

The embedder says two texts are about the same thing; it is blind to the flips that matter most
("prefers tabs" / "no longer prefers tabs", "port 8080" / "port 8081", "tabs over spaces" /
"spaces over tabs"), so those are checked in the words: a pair that differs by one is never a
duplicate, and about the same subject it is a change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agent_memory.core.context import fingerprint

# Calibrated on tests/fixtures/consolidation_pairs.jsonl (tests/bench/bench_consolidation.py).
SAME_MEANING = 0.80  # cosine at or above which two statements say the same thing
SAME_SUBJECT = 0.55  # cosine at or above which a "now ..." statement changes the older one
FLIPPED_SUBJECT = 0.65  # and a statement that only flips a negation, a number or an order
# Names weigh heavily in the embedding ("manager is Priya" / "manager is now Daniel": 0.46), so a
# change may also be recognised at a lower cosine when the words besides names, numbers and
# negations mostly agree.
NAMED_SUBJECT = 0.4
SUBJECT_WORDS = 0.5
SAME_WORDS = 0.8  # word-overlap (Jaccard) fallback for SAME_MEANING without the model
SAME_SUBJECT_WORDS = 0.4  # and for SAME_SUBJECT / FLIPPED_SUBJECT

_FILLER_LEAD = re.compile(
    r"^(?:(?:(?:just\s+)?(?:a\s+)?(?:friendly\s+)?reminder|fyi|note|n\.?b\.?|remember|heads up|psst|"
    r"update|correction|for the record)\s*[:,\-–—]\s*|"
    r"(?:just\s+so\s+you\s+know|for\s+your\s+information|as\s+(?:i|we)\s+(?:said|mentioned)(?:\s+before)?|"
    r"(?:please\s+)?(?:remember|note|keep\s+in\s+mind|don'?t\s+forget)\s+that|"
    r"(?:i\s+)?(?:just\s+)?want(?:ed)?\s+(?:you\s+)?to\s+(?:know|remember)\s+that|"
    r"to\s+remind\s+you|reminding\s+you(?:\s+that)?|once\s+again|again)\s*[:,\-–—]?\s+)+",
    re.IGNORECASE)
_FILLER_TAIL = re.compile(
    r"(?:[\s,;:\-–—]+(?:(?:so\s+)?please\s+)?(?:remember|note|keep\s+in\s+mind|don'?t\s+forget|"
    r"make\s+a\s+note\s+of|take\s+note\s+of)(?:\s+(?:that|this|it))?(?:\s*,?\s*please)?|"
    r"[\s,;:\-–—]+(?:just\s+so\s+you\s+know|fyi|for\s+the\s+record|as\s+a\s+reminder|thanks|thank\s+you|"
    r"please|ok(?:ay)?\?*|again))+\s*([.!]*)\s*$",
    re.IGNORECASE)
# "Claude, I prefer ..." / "Hey Sam, please ...": a name said to the listener, before the statement.
_VOCATIVE_LEAD = re.compile(r"^(?:(?:hey|hi|hello|ok(?:ay)?|so|and)\s+)?[A-Z][a-zA-Z]{1,20},\s+"
                            r"(?=(?:I|I'm|I've|I'd|we|my|our|please|always|never|don'?t|the|from)\b)")
_VOCATIVE_TAIL = re.compile(r",\s+(?:my\s+friend|buddy|mate|[A-Z][a-zA-Z]{1,20})\s*([.!]*)\s*$")

_NEGATION = re.compile(
    r"\b(?:not|no|never|no\s+longer|nobody|none|nothing|neither|nor|without|cannot|stopp?ed|stop|quit|"
    r"anymore|any\s+more)\b|n['’]t\b", re.IGNORECASE)
_CHANGE = re.compile(
    r"\b(?:now|actually|instead|no\s+longer|anymore|any\s+more|changed?|changing|switch(?:ed|ing)?|"
    r"mov(?:ed|ing)\s+(?:to|from)|updated?|from\s+now\s+on|these\s+days|nowadays|currently|"
    r"(?:has|have)\s+become|turned\s+out|revers(?:ed?|ing)|replac(?:ed|es|ing)|rewr(?:ote|itten)|"
    r"went\s+back|gave\s+up|left|from\s+\w+\s+to)\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_COMPARE = re.compile(r"\b(\w+)\s+(?:over|than|instead\s+of|rather\s+than|before|to|not)\s+(\w+)", re.IGNORECASE)
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][\w'’]*")
_STOP = frozenset("a an the to of in on at for and or is are was be it this that with as by user user's we our "
                  "since last".split())

Relation = Literal["same", "changes", "new"]


@dataclass(frozen=True, slots=True)
class Candidate:
    entry_id: str
    content: str
    similarity: float  # cosine by meaning, or word overlap when `by_meaning` is false


@dataclass(frozen=True, slots=True)
class Verdict:
    relation: Relation
    entry_id: str | None = None  # the existing fact it repeats or changes
    reason: str | None = None  # for a change: what differs


def clean_statement(text: str) -> str:
    """Without reminders, pleas to remember and names said to the listener; first letter capital,
    closing full stop kept. Never returns less than the statement itself."""
    out = text.strip()
    for _ in range(3):  # fillers can stack: "Reminder: just so you know, ..."
        before = out
        out = _VOCATIVE_LEAD.sub("", _FILLER_LEAD.sub("", out)).strip()
        out = _FILLER_TAIL.sub(lambda m: m.group(1) or "", out).strip()
        out = _VOCATIVE_TAIL.sub(lambda m: m.group(1) or "", out).strip()
        if out == before:
            break
    if len(out.split()) < 2:
        return text.strip()  # the "filler" was the statement
    out = out.rstrip(" ,;:-–—")
    if out[-1:] not in ".!?":
        out += "."
    return out[:1].upper() + out[1:]


def _numbers(text: str) -> list[str]:
    words = [_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in _NUMBER_WORDS]
    return sorted(n.replace(",", "") for n in _NUMBER.findall(text)) + sorted(words)


def _negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def _stem(word: str) -> str:
    word = re.sub(r"['’]s$", "", word.lower())
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _words(text: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"[\w'’]+", text)}


def _other_names(a: str, b: str) -> bool:
    """Does either text name someone or something (a capitalised word past the first: people,
    places, products, "Server A") that the other never mentions?"""
    for one, other in ((a, b), (b, a)):
        words = _words(other)
        if any(_stem(name) not in words for name in _NAME.findall(one.strip())):
            return True
    return False


def _pairs(text: str) -> set[tuple[str, str]]:
    return {(a.lower(), b.lower()) for a, b in _COMPARE.findall(text)
            if a.lower() not in _STOP and b.lower() not in _STOP}


def flip(old: str, new: str) -> str | None:
    """What makes two statements about the same thing disagree, if anything: a negation on one
    side only, a different number, or the same two things compared the other way round."""
    if _negated(old) != _negated(new):
        return "negation"
    if _numbers(old) != _numbers(new):
        return "number"
    reversed_new = {(b, a) for a, b in _pairs(new)}
    if _pairs(old) & reversed_new - _pairs(new):
        return "order"
    return None


def _subject(text: str) -> set[str]:
    names = {_stem(n) for n in _NAME.findall(text.strip())}
    bare = _CHANGE.sub(" ", _NEGATION.sub(" ", text))
    return {w for w in _words(bare) if w not in _STOP and w not in names and not w[:1].isdigit()}


def subject_overlap(a: str, b: str) -> float:
    """Overlap of the words that say what a statement is about (not names, numbers, negations)."""
    sa, sb = _subject(a), _subject(b)
    return len(sa & sb) / len(sa | sb) if sa and sb else 0.0


def judge(text: str, candidates: Sequence[Candidate], *, by_meaning: bool,
          same_meaning: float = SAME_MEANING, same_subject: float = SAME_SUBJECT) -> Verdict:
    """How `text` relates to the existing statements (most similar first is not required)."""
    if by_meaning:
        same_at, subject_at, flipped_at = same_meaning, same_subject, max(same_subject, FLIPPED_SUBJECT)
    else:
        same_at, subject_at, flipped_at = SAME_WORDS, SAME_SUBJECT_WORDS, SAME_SUBJECT_WORDS
    changing = bool(_CHANGE.search(text))
    for candidate in sorted(candidates, key=lambda c: -c.similarity):
        if candidate.similarity < subject_at and not (
                by_meaning and candidate.similarity >= NAMED_SUBJECT
                and subject_overlap(candidate.content, text) >= SUBJECT_WORDS):
            continue
        if fingerprint(candidate.content) == fingerprint(text):
            return Verdict("same", candidate.entry_id)
        if changing and not _CHANGE.search(candidate.content):
            return Verdict("changes", candidate.entry_id, "restated as a change")
        if candidate.similarity < subject_at:
            continue  # only a change said as one is taken at a lower similarity
        # Other names (Server A / Server B, Tokyo / Osaka) are another subject unless said as a change.
        other_subject = _other_names(candidate.content, text)
        differs = flip(candidate.content, text)
        if differs is None and candidate.similarity >= same_at and not other_subject:
            return Verdict("same", candidate.entry_id)
        if differs is not None and candidate.similarity >= flipped_at and not other_subject:
            return Verdict("changes", candidate.entry_id, differs)
    return Verdict("new")
