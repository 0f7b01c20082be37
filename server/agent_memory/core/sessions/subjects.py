"""What a statement is about, read from its words: the subject key that consolidation requires two
statements to share before one may reinforce or retire the other.

The subject is the part before the verb ("Server alpha | has 64 GB", "The Berlin office | now
opens at 9:00", "Lena, the user's daughter, | plays violin"): every word, name, number and
identifier there is a key, in any casing, so "server alpha" / "server bravo", "db-03" / "db-07",
"ticket 4411" / "ticket 4412", "the Berlin office" / "the Munich office" are different subjects,
while what follows the verb is the value a change may replace ("port 8080" / "port 8081", "lives
in Lyon" / "moved to Montreal"). Two statements are about different subjects when each has a key
the other never mentions; one may name its subject more fully than the other ("The release" /
"The release deadline"). A statement about someone's relative or pet ("the user's partner likes
spicy food") is not about the owner ("the user likes spicy food") unless they share a name.
A statement without a subject before its verb (an imperative, "There are ...") is keyed by its
names and identifiers instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from agent_memory.core.sessions.lexicon import (
    ACRONYMS,
    AMBIGUOUS,
    AUXILIARIES,
    BASE_FORMS,
    DETERMINERS,
    PERSONS,
    PREVERBS,
    PRONOUNS,
    STOP,
    SYNONYM,
    TITLES,
    VERBS,
)

NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())} | {
    "once": "1", "twice": "2", "thrice": "3", "single": "1", "double": "2", "half": "0.5", "dozen": "12"} | {
    w: str(i) for i, w in enumerate("first _ third fourth fifth sixth seventh eighth ninth tenth".split(), 1)}
_NUMBER = re.compile(r"v?\d+(?:[.,:/-]\d+)*(?:st|nd|rd|th|am|pm|k|m|h|s|ms|gb|tb|mb|kb|km|kg|%)?", re.IGNORECASE)
_IDENT_MARK = re.compile(r"[/@#_]|://|[a-z]\.[a-z0-9]|[a-z]:[a-z0-9]", re.IGNORECASE)
_KNOWN = STOP | PREVERBS | VERBS | AMBIGUOUS | AUXILIARIES
_NAMING = frozenset("is are was were be called named".split())
_OBJECT_LEAD = DETERMINERS | frozenset("whoever them him her us me".split())
_LEAD = "\"'“‘([{<*"
_TRAIL = ".,;:!?\"”)]}>*…"


@dataclass(frozen=True, slots=True)
class Token:
    raw: str  # as written, without surrounding punctuation or possessive
    norm: str  # the compared form: a number's value, an identifier in lower case, a stemmed word
    kind: str  # number | ident | word
    name: bool  # a name or an identifier (db-03, Priya, alpha after a title, CORE)
    owner: bool  # written with a possessive ("user's")
    lemma: str  # lower case, singular: for the person nouns
    pause: bool = False  # a comma, semicolon or colon after it
    proper: bool = False  # a name, or a capitalised first word no word list knows ("Priya reviews")


@dataclass(frozen=True, slots=True)
class Reading:
    tokens: tuple[Token, ...]
    verb: int  # index of the token that ends the subject (len(tokens) when none)
    subject: frozenset[str]  # the subject key
    subject_names: frozenset[str]  # its names and identifiers
    who: str | None  # what a possessive subject is about: "the user's partner" -> partner
    who_said: frozenset[str]  # what the statement says it is ("the user's manager is Priya")
    names: frozenset[str]
    words: frozenset[str]  # every norm and lemma

    @property
    def predicate(self) -> tuple[Token, ...]:
        return self.tokens[self.verb:]


def stem(word: str) -> str:
    w = lemma(word)
    if w in SYNONYM or "-" in w:
        return SYNONYM.get(w, w)
    if w.endswith("ied") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("ed") and len(w) > 3:
        w = w[:-2]
    elif w.endswith("er") and len(w) > 5 and not w.endswith("eer"):
        w = w[:-2]  # smoker -> smok, teacher -> teach
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]  # runn -> run, stopp -> stop
    elif len(w) >= 3 and w.endswith("e"):
        w = w[:-1]
    return SYNONYM.get(w, w)


def lemma(word: str) -> str:
    w = re.sub(r"['’]s?$", "", word.lower())
    if w in SYNONYM:
        return SYNONYM[w]
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "ches", "shes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and len(w) > 3 and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    return SYNONYM.get(w, w)


def _token(raw: str, starts: bool, after_title: bool) -> Token:
    owner = bool(re.search(r"['’]s?$", raw)) and raw[-2:].lower() not in ("'t", "’t")
    bare = re.sub(r"['’]s?$", "", raw) if owner else raw
    low = bare.lower()
    if _NUMBER.fullmatch(bare) or low in NUMBER_WORDS:
        value = NUMBER_WORDS.get(low) or re.sub(r"(?<=\d)(?:st|nd|rd|th)$", "", low.replace(",", ""))
        return Token(bare, value, "number", False, owner, value)
    if (re.search(r"\d", bare) and re.search(r"[a-z]", low)) or _IDENT_MARK.search(bare):
        return Token(bare, low, "ident", True, owner, low, proper=True)
    if re.fullmatch(r"[A-HJ-Z]", bare) and not starts:  # "Server A", "zone B"
        return Token(bare, low, "word", True, owner, low, proper=True)
    name = (after_title or (bare[:1].isupper() and not starts)) and low not in STOP and low not in ACRONYMS
    proper = name or (starts and bare[:1].isupper() and low not in _KNOWN)
    return Token(bare, lemma(bare) if name else stem(bare), "word", name, owner, lemma(bare), proper=proper)


def tokens(text: str) -> tuple[Token, ...]:
    out: list[Token] = []
    starts = True
    for chunk in re.split(r"\s+|[—–]", text.strip()):
        raw = chunk.lstrip(_LEAD).rstrip(_TRAIL)
        if not raw or not re.search(r"\w", raw):
            starts = starts or chunk.endswith((".", "!", "?", ":"))
            continue
        after_title = bool(out) and out[-1].raw.lower() in TITLES
        token = _token(raw, starts and not after_title, after_title)
        out.append(replace(token, pause=True) if chunk.rstrip("\"'”’)").endswith((",", ";", ":")) else token)
        starts = chunk.endswith(("!", "?", ":")) or (chunk.endswith(".") and raw.lower() not in TITLES)
    return tuple(out)


def _ends_subject(toks: tuple[Token, ...], i: int, start: int, later: bool) -> bool:
    low = toks[i].raw.lower()
    prev = toks[i - 1] if i > start else None
    after_det = prev is not None and (prev.raw.lower() in DETERMINERS or prev.owner)
    if toks[i].kind != "word" or toks[i].name and i > start:
        return False
    if low in AUXILIARIES or (low == "no" and i + 1 < len(toks) and toks[i + 1].raw.lower() == "longer"):
        return True
    if low in PREVERBS:
        return not after_det
    then = toks[i + 1].raw.lower() if i + 1 < len(toks) else ""
    if then in AUXILIARIES and then not in ("do", "does", "did"):
        return False  # "The design lead is Ingrid": a noun before the verb
    if low in VERBS:
        return (low in BASE_FORMS if prev is None else not after_det)
    past = low.endswith("ed") and prev is not None  # "The user's wife switched jobs": seldom a noun
    if low in AMBIGUOUS and not after_det and (not later or past or (prev is not None and then in _OBJECT_LEAD)):
        if prev is None:
            return low in BASE_FORMS  # "Run the tests", not "Logs are kept"
        plural_before = prev.kind == "word" and prev.raw.lower().endswith("s") and not prev.owner
        return low not in BASE_FORMS or plural_before or prev.name or prev.raw.lower() in PRONOUNS
    return False


def _verb(toks: tuple[Token, ...]) -> int:
    start = 0
    while start < len(toks) and toks[start].raw.lower() in PREVERBS:
        start += 1  # "Now the Berlin office opens ...": a leading adverb is not the verb
    sure = [i for i in range(start, len(toks)) if _ends_subject(toks, i, start, later=True)]
    for i in range(start, len(toks)):
        if _ends_subject(toks, i, start, later=any(j > i for j in sure)):
            return i
    for i in range(start + 1, len(toks)):  # no verb known: a word in -s after a noun ("On-call hands over")
        low, prev = toks[i].raw.lower(), toks[i - 1]
        if (toks[i].kind == "word" and not toks[i].name and re.fullmatch(r"[a-z]+[^su'’]s", low)
                and prev.raw.lower() not in DETERMINERS and not prev.owner):
            return i
    return len(toks)


def _who(part: tuple[Token, ...]) -> str | None:
    """What a possessive subject is about: "the user's partner" -> partner, "the user's flight to
    Lisbon" -> flight."""
    owner = next((i for i, t in enumerate(part) if t.owner), None)
    if owner is None:
        return None
    heads = []
    for token in part[owner + 1:]:
        low = token.raw.lower()
        if low in STOP and low not in DETERMINERS:
            break  # a preposition: "to Lisbon" modifies the head
        if token.kind == "word" and not token.name and low not in STOP:
            heads.append(token.lemma)
        if token.pause:
            break
    return heads[-1] if heads else None


def _who_said(toks: tuple[Token, ...], verb: int, who: str) -> frozenset[str]:
    """What the statement says its possessed subject is: a relative's name, the value after "is"."""
    said = {t.norm for t in toks[:verb] if t.proper and not t.owner} if who in PERSONS else set()
    after = verb + 1 + (verb + 1 < len(toks) and toks[verb + 1].raw.lower() in _NAMING)
    if (verb < len(toks) and toks[verb].raw.lower() in _NAMING and after < len(toks)
            and toks[after].raw.lower() not in VERBS | AMBIGUOUS):  # "is Priya", not "is learning"
        said |= {t.norm for t in toks[after:after + 3] if t.raw.lower() not in STOP}
    return frozenset(said)


def _fronted(part: tuple[Token, ...]) -> int:
    """Where the subject starts after a fronted phrase ("Since the restructuring, the user ...")."""
    low = part[0].raw.lower() if part else ""
    if low in STOP and low not in DETERMINERS and low not in PRONOUNS:
        return next((i + 1 for i, t in enumerate(part[:-1]) if t.pause), 0)
    return 0


@lru_cache(maxsize=4096)  # a reflection compares each new statement with every fact the agent holds
def read(text: str) -> Reading:
    toks = tokens(text)
    verb = _verb(toks)
    part = toks[_fronted(toks[:verb]):verb]
    names = frozenset(t.norm for t in toks if t.name)
    keys = frozenset(t.norm for i, t in enumerate(part) if t.raw.lower() not in TITLES and (t.name or (
        t.raw.lower() not in STOP and t.raw.lower() not in PREVERBS and t.norm not in STOP
        and not (i == 0 and t.raw.lower().endswith("ing") and t.raw.lower() in VERBS | AMBIGUOUS))))
    joined = {a.lemma + b.lemma for a, b in zip(toks, toks[1:], strict=False) if a.kind == b.kind == "word"}
    words = frozenset(w for t in toks for w in (t.norm, t.lemma, stem(t.lemma))) | joined | {stem(w) for w in joined}
    who = _who(part)
    named = frozenset(t.norm for t in part if t.proper and t.raw.lower() not in TITLES)
    return Reading(toks, verb, keys or names, named, who, _who_said(toks, verb, who) if who else frozenset(), names,
                   words)


def _said(r: Reading) -> set[str]:
    return {t.norm for t in r.predicate if t.kind != "number" and t.raw.lower() not in STOP | AUXILIARIES | PREVERBS}


def different_subjects(a: Reading, b: Reading) -> bool:
    """Are the two statements about different things? Yes when each has a subject key the other
    never mentions; when neither subject contains the other and one never mentions the other's
    ("The team chose PostgreSQL for billing" / "The billing service logs JSON"; but "Priya reviews
    the budget" / "Daniel took over the budget from Priya" are linked by her name and the budget);
    and when one is
    about what someone owns or who they know ("the user's partner", "the user's flight") and the
    other is not, unless it mentions it or what it is said to be."""
    sa, sb = a.subject, b.subject
    if sa - b.words and sb - a.words:
        return True
    linked = (sa & b.words and sb & a.words) or (_said(a) & _said(b) and any(
        x.subject_names and x.subject_names <= y.names | {stem(n) for n in y.names} for x, y in ((a, b), (b, a))))
    if not (sa <= sb or sb <= sa or linked):
        return True
    if a.who == b.who:
        return False
    return any(x.who is not None and x.who not in y.words and not x.who_said & y.words
               for x, y in ((a, b), (b, a)))
