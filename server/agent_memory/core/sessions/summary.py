"""Compaction summaries: one entry per chunk of older turns, standing in for them in retrieval.

`chunk` cuts a session's older turns into chunks: at a time gap (a new conversation), where the
turns stop being consecutive in the session, and so that no chunk holds more than `max_turns` (a
longer stretch is split into equal parts). `summarise` writes one chunk's summary, deterministic
and extractive, no longer than the average turn it stands for (`size`: so that summaries take no
more room in a retrieved context than the turns did): a first line naming the turns it covers
(their 1-based positions in the session, first to last) and their dates, then one line per
substantive turn, in order, `speaker: gist`. Greetings, thanks and other small talk are left out;
each gist is its turn's sentences less filler words when they fit, else its most informative
sentences, else its most telling words (words rare across the compacted turns, names, numbers,
dates first). The room goes to turns in proportion to how informative they are; when not every
turn can have a line, the least informative (questions, chatter) go without.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from agent_memory.core.model.clock import parse_ts
from agent_memory.core.model.statements import Turn
from agent_memory.core.recall.query_terms import STOPWORDS, keyword_terms
from agent_memory.core.sessions.extract import is_smalltalk, sentences

T = TypeVar("T")
SUMMARY_MIN_CHARS = 100  # the room a summary always has (even for turns shorter on average)
MIN_GIST = 24  # the shortest gist worth a line (characters of text, speaker label apart)
SUBSTANTIVE = 2  # a sentence scoring less (content words, details counting double) is chatter
MINOR = 0.25  # a turn less informative than this share of its chunk's best is left out when room is short
TOOL_GIST = 80  # a tool turn's gist: the first line of its output, this long at most
_FILLER = frozenset("a an the i i'm i've i'd i'll im really so very just totally super pretty quite actually "
                    "basically definitely literally kinda honestly it it's that's was is am are were be been "
                    "gonna".split())
_LEAD = re.compile(r"^(?:(?:oh|wow|yeah|yes|yep|hey|so|well|haha+|lol|omg|aw+|ah+|um+|hmm+|ok(?:ay)?|anyway|"
                   r"honestly|actually|btw)\b[,!.]*\s+)+", re.IGNORECASE)
_VOCATIVE = re.compile(r",\s+[A-Z][a-z]+([.!?]*)$")  # "That's great, Mel!": the listener's name
_PUNCTUATION = ",;:!.?\"'()[]…–—-"
_NEGATION = frozenset("no not nor never cannot can't don't didn't doesn't won't isn't wasn't".split())
_DETAIL = re.compile(r"\d|[$€£%]")
_CALENDAR = frozenset("january february march april may june july august september october november december "
                      "monday tuesday wednesday thursday friday saturday sunday yesterday today tomorrow week "
                      "weekend month year ago".split())


def chunk(turns: Sequence[tuple[int, Turn, T]], max_turns: int, gap_seconds: float) -> list[list[tuple[int, Turn, T]]]:
    """Split `(ordinal, turn, payload)` triples, in session order, into chunks: a new one after a
    gap of more than `gap_seconds` between two turns (0: never), or where ordinals skip; runs
    longer than `max_turns` are split into equal parts."""
    runs: list[list[tuple[int, Turn, T]]] = []
    for item in turns:
        if runs and runs[-1][-1][0] + 1 == item[0] and not _gap(runs[-1][-1][1], item[1], gap_seconds):
            runs[-1].append(item)
        else:
            runs.append([item])
    chunks = []
    for run in runs:
        parts = -(-len(run) // max(1, max_turns))
        chunks += [run[i * len(run) // parts:(i + 1) * len(run) // parts] for i in range(parts)]
    return chunks


def _gap(before: Turn, after: Turn, gap_seconds: float) -> bool:
    if gap_seconds <= 0 or not before.at or not after.at:
        return False
    try:
        return (parse_ts(after.at) - parse_ts(before.at)).total_seconds() > gap_seconds
    except ValueError:
        return False


def header(ordinals: Sequence[int], turns: Sequence[Turn]) -> str:
    """`Turns 41-42 (2026-01-02):`; `Turn 7 (...)` for one turn; `(2026-01-02 to 2026-01-05)` over
    several days."""
    first, last = min(ordinals), max(ordinals)
    which = f"Turn {first}" if first == last else f"Turns {first}-{last}"
    days = sorted({turn.at[:10] for turn in turns if turn.at})
    span = "" if not days else f" ({days[0]})" if len(days) == 1 else f" ({days[0]} to {days[-1]})"
    return f"{which}{span}:"


class Rarity:
    """How much a word says, from the turns being compacted: log inverse document frequency, so
    that words most turns use ("really", "great", the speakers' names) count least."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self._seen: Counter[str] = Counter()
        for turn in turns:
            self._seen.update(set(keyword_terms(turn.content)))
        self._turns = len(turns)

    def __call__(self, term: str) -> float:
        return math.log((self._turns + 1) / (self._seen[term] + 1)) + 1


def size(turns: Sequence[Turn], max_chars: int) -> int:
    """How long a chunk's summary may be: as long as the average turn it stands for (at least
    SUMMARY_MIN_CHARS), so that summaries take no more room in a retrieved context than turns
    did; never more than `max_chars`."""
    average = sum(len(turn.content) for turn in turns) // max(1, len(turns))
    return min(max_chars, max(SUMMARY_MIN_CHARS, average))


def summarise(ordinals: Sequence[int], turns: Sequence[Turn], max_chars: int, rarity: Rarity | None = None) -> str:
    """One chunk's summary, at most `size(turns, max_chars)` characters; `rarity` weighs words
    (default: from the chunk's own turns)."""
    limit = size(turns, max_chars)
    first = header(ordinals, turns)
    lines = _gists(turns, limit - len(first) - 1, rarity or Rarity(turns))
    return "\n".join([first, *lines])[:limit]


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str  # less filler
    words: list[tuple[str, float]]  # its content words, numbers and negations, with their worth
    score: float


@dataclass(frozen=True, slots=True)
class _Gist:
    index: int
    label: str
    sentences: list[_Sentence]

    @property
    def want(self) -> int:
        return sum(len(s.text) + 1 for s in self.sentences) - 1

    @property
    def importance(self) -> float:
        return max(s.score for s in self.sentences)


def _gists(turns: Sequence[Turn], budget: int, rarity: Rarity) -> list[str]:
    # A chunk over several days marks each line whose day differs from the line before: "(2026-01-02) ".
    days = [turn.at[:10] for turn in turns if turn.at]
    marked = len(set(days)) > 1
    if marked:
        budget -= sum(len(day) + 3 for i, day in enumerate(days) if i == 0 or day != days[i - 1])
    candidates = [g for index, turn in enumerate(turns) if (g := _gist(index, turn, rarity)) is not None]
    kept = sorted(candidates, key=lambda g: (-g.importance, g.index))
    if kept and sum(len(g.label) + 1 + g.want for g in kept) > budget:
        # Short of room: minor turns (far less informative than the chunk's best) go first, then the
        # least informative until every line can hold at least MIN_GIST characters.
        kept = [g for g in kept if g.importance >= MINOR * kept[0].importance]
    while kept and sum(len(g.label) + 1 + min(MIN_GIST, g.want) for g in kept) > budget:
        kept.pop()
    # Every line gets its minimum; the rest goes first to the lines that want least (they take
    # what they use), then in proportion to how informative the others are.
    floors = {g.index: min(MIN_GIST, g.want) for g in kept}
    spare = budget - sum(len(g.label) + 1 + floors[g.index] for g in kept)
    texts: dict[int, str] = {}
    by_want = sorted(kept, key=lambda g: (g.want, g.index))
    for position, gist in enumerate(by_want):
        weight = sum(g.importance for g in by_want[position:])
        share = floors[gist.index] + int(spare * gist.importance / weight)
        texts[gist.index] = _fit(gist, share)
        spare -= len(texts[gist.index]) - floors[gist.index]
    lines, previous = [], None
    for gist in sorted(kept, key=lambda g: g.index):
        day = turns[gist.index].at[:10] if turns[gist.index].at else previous
        mark = f"({day}) " if marked and day != previous else ""
        previous = day
        lines.append(mark + gist.label + texts[gist.index])
    return lines


def _gist(index: int, turn: Turn, rarity: Rarity) -> _Gist | None:
    label = f"{turn.name or turn.role}: "
    if turn.role == "tool":
        first = turn.content.strip().splitlines()[0][:TOOL_GIST] if turn.content.strip() else ""
        words = [(w, rarity(w.lower())) for w in first.split()]
        return _Gist(index, label, [_Sentence(first, words, SUBSTANTIVE)]) if first else None
    found = []
    for sentence in sentences(turn.content):
        sentence = _VOCATIVE.sub(r"\1", _LEAD.sub("", sentence).strip())
        if is_smalltalk(sentence) or (score := _score(sentence)) < SUBSTANTIVE:
            continue
        asked = 0.5 if sentence.rstrip().endswith("?") else 1.0
        words = []
        for position, word in enumerate(sentence.split()):
            bare = word.lower().strip(_PUNCTUATION).replace("’", "'")
            term = bare.split("'")[0]
            dated = bare in _CALENDAR and (bare != "may" or word[:1].isupper())  # not "may" the verb
            if bare in _NEGATION or _DETAIL.search(bare) or dated:
                worth = 2.0 * rarity(term)
            elif term in STOPWORDS or len(bare) < 2:
                continue
            else:
                worth = rarity(term) * (2.0 if position > 0 and word[:1].isupper() else 1.0)
            words.append((word.strip(_PUNCTUATION), worth * asked))
        found.append(_Sentence(_upper(_terse(sentence)), words, score))
    return _Gist(index, label, found) if found else None


def _fit(gist: _Gist, room: int) -> str:
    """The gist in `room` characters: its sentences less filler if they all fit; else the most
    informative ones that fit, each as written or as only its content words, and of the next
    one its most telling words (rare words, names, numbers, dates first); in their order."""
    if gist.want <= room:
        return " ".join(s.text for s in gist.sentences)
    chosen: dict[int, str] = {}
    used = -1
    for i in sorted(range(len(gist.sentences)), key=lambda i: (-gist.sentences[i].score, i)):
        sentence = gist.sentences[i]
        bare = _upper(" ".join(w for w, _ in sentence.words)) + "."
        for form in (sentence.text, bare):
            if used + 1 + len(form) <= room:
                chosen[i] = form
                used += 1 + len(form)
                break
        else:
            if room - used - 1 >= MIN_GIST or not chosen:
                chosen[i] = _telling(sentence.words, room - used - 2)
            break
    return " ".join(chosen[i] for i in sorted(chosen))


def _telling(words: list[tuple[str, float]], room: int) -> str:
    """The most telling words that fit in `room` characters, in their order, ending in "…"."""
    chosen: set[int] = set()
    used = -1
    for i in sorted(range(len(words)), key=lambda i: (-words[i][1], i)):
        if used + 1 + len(words[i][0]) <= room:
            chosen.add(i)
            used += 1 + len(words[i][0])
    return _upper(" ".join(words[i][0] for i in sorted(chosen))) + "…"


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _terse(sentence: str) -> str:
    """The sentence without articles, intensifiers and other words that carry no detail."""
    kept = [word for word in sentence.split() if word.lower().strip(",;:!.") not in _FILLER]
    return " ".join(kept) if len(kept) >= 2 else sentence


def _score(sentence: str) -> float:
    """How informative a sentence is: its content words, details (names, numbers, dates) counting
    double; questions half."""
    terms = keyword_terms(sentence)
    tokens = sentence.split()
    details = sum(1 for word in tokens[1:] if word[:1].isupper()) + sum(1 for word in tokens if _DETAIL.search(word)) \
        + sum(1 for term in terms if term in _CALENDAR)
    score = len(terms) + 2 * details
    return score / 2 if sentence.rstrip().endswith("?") else score
