"""The deterministic extractive engine: what a session states that is worth keeping (facts,
decisions, preferences and rules) becomes facts and rules; everything else is left out.

Pure text rules, no model: the same transcript always gives the same result. Each turn is read
clause by clause (`reading`): what the speaker takes back is dropped and its correction kept;
questions, hypotheticals, other people's claims, negated or undecided choices, status reports and
one-off requests are dropped; what remains is read as a decision, a rule, a preference or a fact,
in the first person, in the team's voice or impersonally (the last two only in work talk). A short
answer takes its kind from the assistant's question ("How many replicas run in prod?" - "6
replicas in prod" is a fact; "What debounce window do you want?" - "20 ms" a decision). Of the
assistant's turns only restatements are read ("Understood, every goroutine must take a
context"); tool turns never give anything.

First-person statements are rewritten in the third person ("I prefer tabs" -> "The user prefers
tabs"); the team's voice and imperatives stay as said ("We never release on Fridays.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.core.model.statements import Insight, Turn
from agent_memory.core.recall.context import near_duplicate
from agent_memory.core.sessions.dialogue import ACK, ACK_TAIL, context_of
from agent_memory.core.sessions.person import third_person
from agent_memory.core.sessions.reading import Read, bare, read_assistant_turn, read_user_turn
from agent_memory.core.sessions.worktalk import is_work_session

__all__ = ["ROLES", "Insight", "Sourced", "Turn", "classify", "extract", "extract_with_sources", "is_smalltalk",
           "sentences", "third_person"]

ROLES = ("user", "assistant", "tool", "system")

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_SMALLTALK = re.compile(
    r"^(hi|hello|hey|thanks|thank you|thx|cheers|bye|goodbye|good (morning|afternoon|evening|night)|lol|haha+|"
    r"ok(ay)?|sure|great|cool|nice|awesome|perfect|sounds good|got it|no problem|you'?re welcome|yes|no|yep|"
    r"nope|right|exactly|i see|hmm+|oh|wow)\b[\s\w,!.']{0,30}$", re.IGNORECASE)
_PLEASE = re.compile(r"[,\s]+please[.!]*$", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|myself)\b", re.IGNORECASE)
_STOP = frozenset("the and for with are is was our its this that from into per not all any".split())
_STRONG = re.compile(r"\b(?:always|never|must|don'?t|do not)\b", re.IGNORECASE)
_CONFIDENCE = {"instruction": 0.7, "constraint": 0.8, "decision": 0.8, "preference": 0.75, "profile": 0.8,
               "fact": 0.75}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text) if s and s.strip()]


def is_smalltalk(sentence: str) -> bool:
    """Greetings, thanks, acknowledgements and fragments of under three words."""
    return len(sentence.split()) < 3 or bool(_SMALLTALK.match(sentence.strip()))


@dataclass(frozen=True, slots=True)
class Sourced:
    """An insight and where it was said: the index of its turn and the span of its text there."""
    insight: Insight
    turn: int
    start: int
    end: int


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[\w./:@-]+", text.lower().rstrip(".")) if len(w) > 2} - _STOP


def _speaker(turn: Turn) -> str:
    if turn.name:
        return turn.name
    return {"user": "The user", "assistant": "The assistant"}.get(turn.role, "The operator")


def _content(text: str) -> str:
    body = _PLEASE.sub("", bare(ACK_TAIL.sub("", ACK.sub("", text.strip())), label=True))
    body = body.strip(" -*•\t,;:")
    if not body:
        return ""
    if re.match(r"^[a-z]+(?:\s|$)", body):  # a word, not an identifier ("ingest-svc", "minSdk", "node_exporter")
        body = body[:1].upper() + body[1:]
    if body[-1] not in ".!":
        body = body.rstrip(",;:") + "."
    return body


def _insight(read: Read, turn: Turn) -> Insight | None:
    text = turn.content[read.start:read.end]
    content = _content(text)
    if not content:
        return None
    if read.instead:
        content = f"{content[:-1]} (instead of: {read.instead.rstrip('.,;: ')})."
    category = read.category or "fact"
    if category != "instruction" and _FIRST_PERSON.search(content):
        content = third_person(content, _speaker(turn))  # imperatives stay as said
    first_person = bool(re.match(r"^(?:i|we|i'd|i'm|we'd|my|our)\b", bare(text), re.IGNORECASE))
    kind = "rule" if category in ("instruction", "constraint") or (category == "preference" and not first_person) \
        else "fact"
    confidence = 0.6 if turn.role == "assistant" else _CONFIDENCE[category]
    if category == "instruction" and _STRONG.search(text) and turn.role != "assistant":
        confidence = 0.85
    return Insight(kind, content, confidence, category)


def classify(turn: Turn, sentence: str) -> Insight | None:
    """The first insight one sentence of one turn states, if any (no conversation around it)."""
    found = extract_with_sources([Turn(turn.role, sentence, turn.name, turn.at)], 1)
    return found[0].insight if found else None


def extract_with_sources(turns: list[Turn], max_items: int) -> list[Sourced]:
    """What `extract` gives, each insight with the turn and the span it came from."""
    found: list[tuple[int, Sourced]] = []
    previous: Turn | None = None
    work = is_work_session([t.content for t in turns if t.role != "tool"], any(t.role == "tool" for t in turns))
    for index, turn in enumerate(turns):
        if turn.role == "tool":
            continue  # tool output states results, not the user's facts or rules
        reads = read_assistant_turn(turn, work) if turn.role == "assistant" else \
            read_user_turn(turn, context_of(previous, work))
        previous = turn
        for read in reads:
            insight = _insight(read, turn)
            if insight is None or any(near_duplicate(insight.content, seen.insight.content, 0.8) for _, seen in found):
                continue
            if turn.role == "assistant" and any(_words(insight.content) <= _words(seen.insight.content)
                                                for _, seen in found):
                continue  # "CI runs on forge-7." after the user's "Our CI runs on a runner named forge-7."
            found.append((len(found), Sourced(insight, index, read.start, read.end)))
    found.sort(key=lambda pair: (-pair[1].insight.confidence, pair[0]))
    return [sourced for _, sourced in found[:max_items]]


def extract(turns: list[Turn], max_items: int) -> list[Insight]:
    """Facts and rules stated in `turns`, strongest first, without near-duplicates."""
    return [sourced.insight for sourced in extract_with_sources(turns, max_items)]
