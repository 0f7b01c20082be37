"""How a new fact or rule relates to the ones an agent already holds: the same thing said again
(reinforce it), a change of mind about the same subject (supersede the old one), or something
new (store it). Pure: similarities come from the caller (the embedder's cosine, or word overlap
when the model is not loaded).

Nothing about another subject is ever merged, whatever the similarity: `subjects` reads what each
statement is about ("Server alpha", "db-03", "the Berlin office", "the user's partner") and the
two must agree. The embedder says two texts are about the same thing; it is blind to the flips
that matter most ("prefers tabs" / "no longer prefers tabs", "port 8080" / "port 8081", "tabs over
spaces" / "spaces over tabs"), so those are checked in the words: a pair that differs by one is
never a duplicate, and about the same subject it is a change. A statement said as a change ("now",
"moved to", "after the reorg") changes an older one when both speak of the same attribute.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agent_memory.core.recall.context import fingerprint
from agent_memory.core.sessions.lexicon import AMBIGUOUS, AUXILIARIES, CONTRAST, PREVERBS, STOP, VERBS
from agent_memory.core.sessions.subjects import Reading, Token, different_subjects, read, stem

# Calibrated on tests/fixtures/consolidation_pairs.jsonl (tests/bench/bench_consolidation.py).
# Every threshold applies only to statements about the same subject (`subjects.different_subjects`).
SAME_MEANING = 0.75  # cosine at or above which two statements say the same thing
# A statement said as a change ("now", "moved to", "after the reorg") changes an older one about the
# same subject at this cosine when both speak of the same attribute (`linked`); names and places
# weigh heavily in the embedding, so "lives in Lyon" / "moved to Montreal" is only 0.51.
SAME_SUBJECT = 0.45
LINK_BONUS = 0.05  # less when they share a word or a kind of fact ("based in Austin" / "relocated to Denver": 0.41)
UNLINKED_CHANGE = 0.75  # and at this one when nothing links what they say about it
FLIPPED_SUBJECT = 0.65  # a statement that only flips a negation, a number or an order
SAME_WORDS = 0.5  # word-overlap (Jaccard) fallback for SAME_MEANING without the model
SAME_SUBJECT_WORDS = 0.2  # and for SAME_SUBJECT / FLIPPED_SUBJECT
UNLINKED_CHANGE_WORDS = 0.6

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


_CHANGE = re.compile(
    r"\b(?:now|actually|instead|no\s+longer|anymore|any\s+more|no\s+more|changed?|changing|switch(?:ed|ing)?|"
    r"mov(?:ed|ing)\b|updated?|from\s+now\s+on|going\s+forward|as\s+of|these\s+days|nowadays|currently|"
    r"(?:has|have)\s+become|became|turn(?:ed|s)\s+out|revers(?:ed?|ing)|replac(?:ed|es|ing)|rewr(?:ote|itten)|"
    r"went\s+back|gave\s+up|left|quit|stopped|started|joined|again|from\s+\S+\s+to|"
    r"(?:up|down)grad(?:ed|ing)|migrat(?:ed|ing)|relocat(?:ed|ing)|renam(?:ed|ing)|reassign(?:ed|ing)|"
    r"promot(?:ed|ing)|rais(?:ed|ing)\s+to|lower(?:ed|ing)\s+to|cut\s+to|increas(?:ed|ing)|decreas(?:ed|ing)|"
    r"reduc(?:ed|ing)|extend(?:ed|ing)|pushed\s+(?:back|to)|postpon(?:ed|ing)|reschedul(?:ed|ing)|"
    r"took\s+over|handed|scaled\s+(?:up|down|to|back)|stepp(?:ed)\s+down|"
    r"(?:after|since|with)\s+(?:the|our|my|their|his|her)\s+(?:move|migration|reorg\w*|switch|upgrade|"
    r"merger|relocation|promotion|restructuring))\b", re.IGNORECASE)
_NEGATORS = frozenset("not no never nobody none nothing neither nor without cannot anymore".split())
_NEGATIVE_VERBS = frozenset(stem(w) for w in "dislike hate avoid refuse stop quit lack".split())
_COMPARE = re.compile(r"\b(\w+)\s+(?:over|than|instead\s+of|rather\s+than|before|to|not)\s+(\w+)", re.IGNORECASE)
_PAIR_STOP = frozenset("a an the to of in on at for and or is are was be it this that with as by user user's we our "
                       "since last".split())
_PLAIN = STOP | AUXILIARIES | PREVERBS
GENERIC = frozenset("user team company".split())  # subjects too common to link two statements alone
_WHEN = frozenset("last next ago year years month months week weeks today yesterday tomorrow tonight after all".split())


_FRAMES = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"\b(?:liv(?:e|es|ed|ing)\s+(?:in|at|on|near)|mov(?:e|es|ed|ing)\s+(?:to|into|from|out)|relocat\w*|"
    r"home\s*town|(?:house|flat|apartment)\s+in|based\s+in|resid\w*|address)\b",  # where someone lives
    r"\b(?:work(?:s|ed|ing)?\s+(?:at|for)|employ\w*|join(?:s|ed)|left|hired)\b",  # where they work
    r"\b(?:commut\w*|(?:to|from)\s+work|to\s+the\s+office)\b",  # how they get there
    r"\b(?:called|named|renamed|known\s+as)\b",  # what something is called
))
_TIMEFRAME = re.compile(r"\b(?:these\s+days|nowadays|from\s+now\s+on|going\s+forward|as\s+of\s+\w+)\b",
                        re.IGNORECASE)
_CLOCK = re.compile(r"\d{1,2}:\d{2}")


def says_change(text: str) -> bool:
    """Is the statement said as a change ("now", "moved to", "switched", "after the reorg")?"""
    return bool(_CHANGE.search(text))


def _negator(token: Token, before: Token | None) -> bool:
    low = token.raw.lower()
    if low == "not" and before is not None and (before.pause or before.raw.lower() in ("and", "but")):
        return False  # "tabs, not spaces": a contrast, not a negation of the statement
    if token.norm in _NEGATIVE_VERBS:
        return before is None or before.raw.lower() != "to"  # "switched to Tuesdays to avoid the freeze"
    return low in _NEGATORS or low.endswith(("n't", "n’t"))


def _negations(r: Reading) -> list[frozenset[str]]:
    """The words each negation of the statement applies to (the few content words around it)."""
    toks, out = r.tokens, []
    for i, token in enumerate(toks):
        if _negator(token, toks[i - 1] if i else None):
            near = toks[max(0, i - 3):i] if token.raw.lower() == "anymore" else toks[i + 1:i + 5]
            out.append(frozenset(t.norm for t in near if t.raw.lower() not in _PLAIN | _WHEN and t.kind == "word"))
    return out


def _quantities(r: Reading) -> dict[str, frozenset[str]]:
    """Numbers by what they count or name: {"gb": {"64"}, "port": {"8080"}, "day": {"30"}}."""
    toks, out = r.tokens, {}
    for i, token in enumerate(toks):
        if token.kind != "number":
            continue
        after = [t for t in toks[i + 1:i + 3] if (t.name or t.raw.lower() not in _PLAIN) and t.kind == "word"]
        before = [t for t in toks[max(0, i - 3):i] if (t.name or t.raw.lower() not in _PLAIN) and t.kind == "word"
                  and not _CHANGE.fullmatch(t.raw)]
        unit = "time" if token.raw.lower() in ("once", "twice", "thrice") else "clock" if _CLOCK.fullmatch(
            token.raw) else after[0].norm if after else before[-1].norm if before else ""
        out.setdefault(unit, set()).add(token.norm)
    return {unit: frozenset(values) for unit, values in out.items()}


def _values(r: Reading) -> frozenset[str]:
    return frozenset(value for values in _quantities(r).values() for value in values)


def _pairs(text: str) -> set[tuple[str, str]]:
    return {(a.lower(), b.lower()) for a, b in _COMPARE.findall(text)
            if a.lower() not in _PAIR_STOP and b.lower() not in _PAIR_STOP}


def polarity(a: Reading, b: Reading) -> str | None:
    """None when neither or both statements deny something; "flipped" when one denies what the
    other says ("likes dark roast" / "doesn't like dark roast any more"); "apart" when it denies
    something else ("allergic to peanuts" / "not allergic to penicillin"): another fact."""
    na, nb = _negations(a), _negations(b)
    if bool(na) == bool(nb):
        return None
    negated, other = (a, b) if na else (b, a)
    denied = {w for scope in na or nb for w in scope if w not in other.words}
    things = {t.norm for t in negated.tokens if t.norm in denied and t.raw.lower() not in VERBS | AMBIGUOUS}
    return "apart" if things and _content(other) - negated.words else "flipped"


def flip(old: str, new: str) -> str | None:
    """What makes two statements about the same thing disagree, if anything: a negation on one
    side only, a different number of the same thing, or the same two things compared the other
    way round."""
    a, b = read(old), read(new)
    if polarity(a, b) is not None:
        return "negation"
    qa, qb = _quantities(a), _quantities(b)
    if any(qa[unit] != qb[unit] for unit in qa.keys() & qb.keys()):
        return "number"
    reversed_new = {(y, x) for x, y in _pairs(new)}
    if _pairs(old) & reversed_new - _pairs(new):
        return "order"
    return None


def _content(r: Reading) -> frozenset[str]:
    return frozenset(t.norm for t in r.tokens if t.kind == "word" and t.raw.lower() not in _PLAIN
                     and not _negator(t, None) and not _CHANGE.fullmatch(t.raw))


def other_names(a: Reading, b: Reading) -> bool:
    """Does either statement name someone or something (a person, place, product, identifier)
    that the other never mentions?"""
    return bool(a.names - b.words or b.names - a.words)


def contrasted(a: Reading, b: Reading) -> bool:
    """Does each say a value the other does not, of one kind ("aisle" / "window", "vegan" /
    "vegetarian")?"""
    only_a = {CONTRAST[t.lemma] for t in a.tokens if t.lemma in CONTRAST and t.lemma not in b.words}
    return any(CONTRAST[t.lemma] in only_a for t in b.tokens if t.lemma in CONTRAST and t.lemma not in a.words)


def one_difference(a: Reading, b: Reading) -> bool:
    """Besides numbers and negations, does at most one side say something the other does not?"""
    return not (_content(a) - b.words and _content(b) - a.words)


def _main_verb(r: Reading) -> str | None:
    copula = False
    for token in r.predicate:
        low = token.raw.lower()
        if low in PREVERBS or low in AUXILIARIES:
            copula = copula or low in ("is", "are", "was", "were", "be", "been", "am")
            continue  # "is now", "was upgraded": the verb, if any, comes later
        verbal = token.kind == "word" and not token.name and low in VERBS | AMBIGUOUS
        return token.norm if verbal or not copula else "be"
    return "be" if copula else None


def linked(a: Reading, b: Reading, old: str, new: str) -> int:
    """How surely two statements about one subject speak of the same attribute of it: 2 when what
    they say has a word in common ("plays tennis" / "plays padel instead of tennis"), a value of
    the same kind ("on Tuesdays" / "to Thursdays"), a number of the same thing, one's value is the
    other's subject, or they tell the same kind of fact (where someone lives, works, how they
    commute: "lives in Lyon" / "moved to Montreal"); 1 when only the verb is the same ("manager is
    Marguerite" / "manager is now Tomasz"); else 0."""
    def rest(text: str) -> set[str]:
        r = read(_TIMEFRAME.sub(" ", text))  # "these days" / "every day" link nothing
        words = {re.sub(r"(?<=..)ed$", "", t.lemma) for t in r.predicate[1:]
                 if t.raw.lower() not in _PLAIN and t.kind != "number"}
        return words | {w[2:] for w in words if w.startswith("re") and len(w) > 5}
    ra, rb = rest(old), rest(new)
    kinds = {CONTRAST[w] for w in ra if w in CONTRAST} & {CONTRAST[w] for w in rb if w in CONTRAST}
    sa, sb = {stem(w) for w in ra}, {stem(w) for w in rb}
    if (ra & rb or kinds or len(sa & b.subject) > 1 or len(sb & a.subject) > 1
            or _quantities(a).keys() & _quantities(b).keys() - {""}
            or any(f.search(old) and f.search(new) for f in _FRAMES)):
        return 2
    verb = _main_verb(a)
    return int(verb is not None and verb == _main_verb(b))


def lexical_similarity(a: str, b: str) -> float:
    """Overlap (Jaccard) of the two statements' content words, stemmed: the similarity used
    while the embedding model is not loaded."""
    ra, rb = read(a), read(b)
    wa, wb = _content(ra) | ra.names, _content(rb) | rb.names
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def judge(text: str, candidates: Sequence[Candidate], *, by_meaning: bool,
          same_meaning: float = SAME_MEANING, same_subject: float = SAME_SUBJECT) -> Verdict:
    """How `text` relates to the existing statements (most similar first is not required).
    Nothing about another subject is ever `same` or `changes`, whatever the similarity."""
    if by_meaning:
        same_at, change_at, flipped_at = same_meaning, same_subject, FLIPPED_SUBJECT
        unlinked_at, link_needed = UNLINKED_CHANGE, 1
    else:
        same_at, change_at, flipped_at = SAME_WORDS, SAME_SUBJECT_WORDS, SAME_SUBJECT_WORDS
        unlinked_at, link_needed = UNLINKED_CHANGE_WORDS, 2  # without the model, a verb alone links too little
    new = read(text)
    changing = says_change(text)
    for candidate in sorted(candidates, key=lambda c: -c.similarity):
        if fingerprint(candidate.content) == fingerprint(text):
            return Verdict("same", candidate.entry_id)
        old = read(candidate.content)
        if (candidate.similarity < change_at - LINK_BONUS * by_meaning or different_subjects(old, new)
                or polarity(old, new) == "apart"):
            continue
        specific = bool(old.subject & new.subject - GENERIC)  # "the user's manager", not just "the user"
        link = linked(old, new, candidate.content, text)
        if changing and candidate.similarity >= (
                change_at - LINK_BONUS * (by_meaning and link == 2) if link >= max(1, link_needed - specific)
                else unlinked_at):
            if not says_change(candidate.content):
                return Verdict("changes", candidate.entry_id, "restated as a change")
            if link == 2 and other_names(old, new):  # "moved to Montreal", then "moved to Toronto"
                return Verdict("changes", candidate.entry_id, "changed again")
        differs = flip(candidate.content, text)
        if (differs is None and candidate.similarity >= same_at and not other_names(old, new)
                and not contrasted(old, new) and _values(old) == _values(new)
                and (by_meaning or one_difference(old, new))):  # by words: one says no more than the other
            return Verdict("same", candidate.entry_id)
        if (differs is not None and candidate.similarity >= flipped_at and not other_names(old, new)
                and one_difference(old, new)):
            return Verdict("changes", candidate.entry_id, differs)
    return Verdict("new")
