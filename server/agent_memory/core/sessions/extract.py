"""The deterministic extractive engine: what a session states that is worth keeping (facts,
decisions, preferences and rules) becomes facts and rules; everything else is left out.

Pure text rules, no model: the same transcript always gives the same result. Each user (or
system) turn is cut into clauses (`clauses`); what the speaker takes back in the same turn is
dropped and its correction kept (`retraction`); questions, hypotheticals, other people's claims,
negated or undecided choices, status reports and one-off requests are dropped (`negatives`); what
remains is read as a decision, a rule, a preference or a fact (`kinds`), in the first person, in
the team's voice or impersonally. A short answer takes its kind from the assistant's question
("How many replicas run in prod?" - "6 replicas in prod" is a fact; "What debounce window do you
want?" - "20 ms" a decision), an imperative that takes up the assistant's proposal is a decision,
other requests about the task at hand are not kept. Of the assistant's turns only restatements are
read ("Understood, every goroutine must take a context"); tool turns never give anything.
Adjacent clauses of one sentence that say the same kind of thing are kept as one.

First-person statements are rewritten in the third person ("I prefer tabs" -> "The user prefers
tabs"); the team's voice and imperatives stay as said ("We never release on Fridays.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.core.model.statements import Insight, Turn
from agent_memory.core.recall.context import near_duplicate
from agent_memory.core.sessions import kinds, negatives
from agent_memory.core.sessions.clauses import HARD, SOFT, clauses
from agent_memory.core.sessions.person import third_person
from agent_memory.core.sessions.retraction import State, is_directive, settle

__all__ = ["ROLES", "Insight", "Sourced", "Turn", "classify", "extract", "extract_with_sources", "is_smalltalk",
           "sentences", "third_person"]

ROLES = ("user", "assistant", "tool", "system")

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_SMALLTALK = re.compile(
    r"^(hi|hello|hey|thanks|thank you|thx|cheers|bye|goodbye|good (morning|afternoon|evening|night)|lol|haha+|"
    r"ok(ay)?|sure|great|cool|nice|awesome|perfect|sounds good|got it|no problem|you'?re welcome|yes|no|yep|"
    r"nope|right|exactly|i see|hmm+|oh|wow)\b[\s\w,!.']{0,30}$", re.IGNORECASE)
_LEAD = re.compile(
    r"^(?:(?:please(?=,)|pls(?=,)|also|and|so|oh|btw|by the way|ok(?:ay)?|well|anyway|one more thing|yeah|yes|yep|wow|haha|"
    r"hey|honestly|hmm+|nice|sweet|cool|great|good|perfect|phew|fyi|remember|note|plus|but|eh|er|right|sure|"
    r"👍)(?:[,:!.]+\s*|\s+))+", re.IGNORECASE)
_LABEL = re.compile(r"^(?![^:]*\b(?:decision|decided|rule)\b)[\w\s',-]{1,40}:\s+(?=\S)", re.IGNORECASE)
_TAIL = re.compile(r"(?:[,\s]+(?:btw|thanks|thank you|thx|ty|cheers|though|obviously|that'?s it|for the record|fyi|"
                   r"lol|anyway|anymore))+[.!]*$", re.IGNORECASE)
_PLEASE = re.compile(r"[,\s]+please[.!]*$", re.IGNORECASE)
_ACK = re.compile(r"^(?:understood|got it|noted|ok(?:ay)?|sure|thanks|will do|right|perfect|great|sounds good)\b"
                  r"[,:.!]?\s*[—–-]?\s+", re.IGNORECASE)
_ACK_TAIL = re.compile(r"[,\s]+(?:understood|noted|got it|will do)[.!]*$", re.IGNORECASE)
_ASSISTANT_STANDING = re.compile(r"\b(?:from now on|going forward|in future|per your preference|noted for future|"
                                 r"will (?:always|never|keep)|^will keep)\b", re.IGNORECASE)
_SHARED_DECISION = re.compile(r"\b(?:we(?:'ve| have)? (?:decided|agreed|settled on|chose)|we'?re going with|"
                              r"let'?s go with)\b", re.IGNORECASE)
_LISTENER = re.compile(r"\b(?:you|your|you're|you've|yours)\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|myself)\b", re.IGNORECASE)
_QUOTE_END = re.compile(r"\b(?:said|says|reckons?|claims?|claimed|thinks)$", re.IGNORECASE)
_PERMISSION = re.compile(r"^(?:should i|shall i|do you want me|want me|would you like me|can i|may i|is it ok if i|"
                         r"ok if i|should we (?:also )?(?:fix|do|run|add)|do you want a)\b", re.IGNORECASE)
_FACT_QUESTION = re.compile(r"\b(?:how many|how much|how big|is there|are there|do you have|what'?s the current|"
                            r"what is the current|does it|is that|are the|are they|do you (?:use|run|support)|"
                            r"did \w+)\b|\b(?:do|does) (?:you|we)\b[^?]*\b(?:use|run|support)\?$", re.IGNORECASE)
_DECISION_QUESTION = re.compile(r"\b(?:want|prefer|should|ok|okay|rather|which|threshold|window|or)\b",
                                re.IGNORECASE)
_PROPOSAL = re.compile(r"\b(?:could|would|might|should|either|suggest|recommend|option|probably|likely|if)\b",
                       re.IGNORECASE)
_CONTENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_COMMON = frozenset("could would might should either suggest recommend option probably likely that this there "
                    "with what which want your have does just only also then than them they into from about "
                    "more much make sure okay".split())
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


@dataclass
class _Read:
    """One clause as read: the category it states (or why it is never kept), in its span."""
    start: int
    end: int
    sentence: int
    cut: str
    category: str | None = None
    why: str | None = None
    annotation: bool = False
    anaphora: bool = False
    so: bool = False  # opens with "so": a consequence of the clause before
    fragment: bool = False  # without a verb: "never in the repo", "headers only"
    instead: str = ""  # for a correction without a verb ("no wait, 30"), what it corrects


@dataclass(frozen=True, slots=True)
class _Context:
    answer: str | None  # the kind of answer the assistant's last question asks for: fact, decision, permission
    proposal: frozenset[str]  # content words of what the assistant proposed ("we could mock the import")


def _bare(text: str) -> str:
    """The clause without its lead-in ("yeah", "fyi", "Context:") and tail ("btw", "thanks")."""
    out = _LEAD.sub("", text.strip()).strip()
    out = _LABEL.sub("", out) if len(out.split(":")[0].split()) <= 6 else out
    out = _TAIL.sub("", out).strip(" ,;:-")
    return _LEAD.sub("", out).strip()


def _context(previous: Turn | None) -> _Context:
    if previous is None or previous.role != "assistant":
        return _Context(None, frozenset())
    parts = sentences(previous.content)
    asked = [p for p in parts if p.rstrip().endswith("?")]
    answer = None
    if asked:
        question = _LEAD.sub("", asked[-1])
        answer = "permission" if _PERMISSION.match(question) else "fact" if _FACT_QUESTION.search(question) \
            else "decision" if _DECISION_QUESTION.search(question) else None
    proposed = {w.lower() for p in parts if _PROPOSAL.search(p) or p.rstrip().endswith("?")
                for w in _CONTENT_WORD.findall(p)} - _COMMON
    return _Context(answer, frozenset(proposed))


def _category(text: str, context: _Context, *, correction: bool, answering: bool, opens: bool = True,
              withdrew_request: bool = False) -> tuple[str | None, str | None]:
    """(category, None) for a clause worth keeping, (None, why) for one never kept, (None, None) for
    a clause that says nothing by itself (it may still round off the clause before it)."""
    if correction and is_directive(text.split(",")[0]) and not kinds.is_decision(text) \
            and kinds.rule_category(text) is None and (kinds.is_technical(text) or kinds.is_imperative(text) or
                                                       withdrew_request):
        return (None, "one-off request") if negatives.is_one_off(text) else ("decision", None)
    why = negatives.why_not(text)
    if why is not None:
        return None, why
    if _LISTENER.search(text) and not kinds.is_imperative(text) and not negatives.STANDING.search(text):
        return None, "about the listener"  # "you're doing great", "that must be so hard for you"
    echoes = bool({w.lower() for w in _CONTENT_WORD.findall(text)} & context.proposal)
    if kinds.is_decision(text, echoes):
        return "decision", None
    fragment = kinds.is_fragment(text)
    if answering and context.answer in ("fact", "decision") and (fragment or kinds.is_imperative(text)) \
            and not kinds.is_preference(text):
        if context.answer == "decision" or fragment:
            return context.answer, None
    if negatives.is_request(text):
        return None, "one-off request"
    rule = kinds.rule_category(text, opens)
    if rule is not None:
        return (None, "one-off request") if rule == "instruction" and negatives.is_one_off(text) else (rule, None)
    if kinds.is_preference(text):
        return (None, "one-off request") if kinds.is_imperative(text) and negatives.is_one_off(text) \
            else ("preference", None)
    fact = kinds.fact_category(text)
    if fact is not None:
        return fact, None
    if kinds.is_imperative(text):
        words = {w.lower() for w in _CONTENT_WORD.findall(text.split(maxsplit=1)[-1])}
        if words & context.proposal and not negatives.is_one_off(text):
            return "decision", None  # "mock grpc with autodoc_mock_imports" after "we could mock the import"
        return None, "one-off request"
    return None, None


def _read_turn(turn: Turn, context: _Context) -> list[_Read]:
    found = clauses(turn.content)
    states = settle([c.text for c in found])
    answering = True  # the turn's first clause, and the fragments right after it, answer the question
    out: list[_Read] = []
    for index, (clause, (state, offset)) in enumerate(zip(found, states, strict=True)):
        read = _Read(clause.start, clause.end, clause.sentence, clause.cut)
        out.append(read)
        if state in (State.WITHDRAWN, State.MARKER):
            read.why = "retracted"
            continue
        said = clause.text[offset:]
        read.start += offset + len(said) - len(said.lstrip(" ,.!"))  # a correction starts after its marker
        bare = _bare(said)
        if kinds.ANNOTATION.match(bare):
            read.annotation = True
            continue
        if negatives.is_quote(bare) or index and _QUOTE_END.search(found[index - 1].text):
            read.why = "quote"  # "Priya reckons" + "we're calling the address API per message"
            continue
        read.anaphora = bool(kinds.ANAPHORA.match(bare))
        read.so = bool(re.match(r"^(?:and\s+)?so\b", clause.text, re.IGNORECASE))
        read.fragment = kinds.is_fragment(bare)
        correction = state is State.CORRECTION
        taken = [_bare(found[i].text) for i in range(index) if states[i][0] is State.WITHDRAWN]
        if correction and kinds.is_fragment(bare.split(",")[0]) and taken:
            read.instead = taken[-1]  # "30" says little without "set the pool size to 20"
        answering = answering and (not out[:-1] or read.fragment) and clause.sentence == found[0].sentence
        short = len(bare.split()) < 2 or (len(bare.split()) < 3 and not kinds.has_detail(bare))
        if short and not correction and not (answering and context.answer and not out[:-1] and bare.strip(".")):
            continue  # a word or two, unless it answers the question ("postgres", "20") or corrects
        read.category, read.why = _category(bare, context, correction=correction, answering=answering,
                                            opens=clause.cut == HARD,
                                            withdrew_request=bool(taken) and kinds.is_imperative(taken[-1]))
    return out


def _merge(reads: list[_Read]) -> list[_Read]:
    """Clauses of one sentence kept as one: the same kind said twice ("we run Kafka 3.6 on MSK, the
    topic has 24 partitions"), a statement and its tail ("..., oversells are expensive"), a statement
    and the remark that makes it a rule ("..., that's a hard rule") or a preference ("..., I prefer that")."""
    out: list[_Read] = []
    for read in reads:
        last = out[-1] if out else None
        near = last is not None and read.cut == SOFT and read.sentence == last.sentence
        joined = near and last.why is None
        if joined and read.annotation:
            _annotate(out, read)
        elif near and read.anaphora and read.why is None and last.why in (None, "one-off request"):
            last.end, last.category, last.why = read.end, "preference", None
        elif joined and last.category and read.why is None and (
                read.category is None or _family(read.category) == _family(last.category)):
            last.end = read.end
        elif joined and last.category and _family(read.category or "") == "rule" and read.fragment:
            last.end = read.end  # "secrets are stored in Vault, never in the repo": one rule
            last.category = "constraint" if _family(last.category) != "rule" else last.category
        elif joined and _family(last.category or "") == "rule" and read.category in ("fact", "profile"):
            last.end = read.end  # "never deploy on weekends, I run the on-call rota then": the rule's reason
        elif joined and last.category and read.category and read.so and "rule" in (
                _family(last.category), _family(read.category)):
            last.end = read.end  # "consumers are at-least-once, so handlers have to be idempotent": one rule
            last.category = read.category if _family(read.category) == "rule" else last.category
        else:
            out.append(read)
    return [read for read in out if read.category]


def _annotate(out: list[_Read], annotation: _Read) -> None:
    """"..., that's a hard rule", "..., keep it that way": the statement before (with its tails, back
    to the start of the sentence or the last clause that is not kept) becomes one rule."""
    first = len(out) - 1
    while first > 0 and out[first].cut == SOFT and out[first - 1].sentence == annotation.sentence \
            and out[first - 1].why is None and out[first].category is None:
        first -= 1
    merged = out[first]
    merged.end = annotation.end
    merged.category = merged.category if merged.category == "instruction" else "constraint"
    del out[first + 1:]


def _family(category: str) -> str:
    return {"instruction": "rule", "constraint": "rule", "profile": "fact"}.get(category, category)


def _speaker(turn: Turn) -> str:
    if turn.name:
        return turn.name
    return {"user": "The user", "assistant": "The assistant"}.get(turn.role, "The operator")


def _content(text: str, turn: Turn) -> str:
    body = _PLEASE.sub("", _bare(_ACK_TAIL.sub("", _ACK.sub("", text.strip()))))
    body = body.strip(" -*•\t,;:")
    if not body:
        return ""
    if re.match(r"^[a-z]+(?:\s|$)", body):  # a word, not an identifier ("ingest-svc", "minSdk", "node_exporter")
        body = body[:1].upper() + body[1:]
    if body[-1] not in ".!":
        body = body.rstrip(",;:") + "."
    return body


def _insight(read: _Read, turn: Turn, text: str, instead: str = "") -> Insight | None:
    content = _content(text, turn)
    if not content:
        return None
    if instead:
        content = f"{content[:-1]} (instead of: {instead.rstrip('.,;: ')})."
    category = read.category or "fact"
    if category != "instruction" and _FIRST_PERSON.search(content):
        content = third_person(content, _speaker(turn))  # imperatives stay as said
    first_person = bool(re.match(r"^(?:i|we|i'd|i'm|we'd|my|our)\b", _bare(text), re.IGNORECASE))
    kind = "rule" if category in ("instruction", "constraint") or (category == "preference" and not first_person) \
        else "fact"
    confidence = 0.6 if turn.role == "assistant" else _CONFIDENCE[category]
    if category == "instruction" and _STRONG.search(text) and turn.role != "assistant":
        confidence = 0.85
    return Insight(kind, content, confidence, category)


def _assistant_reads(turn: Turn) -> list[_Read]:
    """The assistant's restatements only, a sentence at a time: "Understood, every goroutine must take
    a context", "Redis for sessions, understood", "So we decided to use Redis"."""
    out = []
    by_sentence: dict[int, list] = {}
    for clause in clauses(turn.content):
        by_sentence.setdefault(clause.sentence, []).append(clause)
    for parts in by_sentence.values():
        start, end = parts[0].start, parts[-1].end
        text = turn.content[start:end]
        ack = _ACK.match(text)
        if not (ack or _ACK_TAIL.search(text) or _ASSISTANT_STANDING.search(text) or _SHARED_DECISION.search(text)):
            continue
        start += ack.end() if ack else 0
        bare = _bare(_ACK_TAIL.sub("", turn.content[start:end]))
        if len(bare.split()) < 3 or negatives.why_not(bare):
            continue
        category = "decision" if kinds.is_decision(bare, True) else kinds.rule_category(bare) or \
            ("preference" if kinds.is_preference(bare) else kinds.fact_category(bare))
        if category:
            out.append(_Read(start, end, parts[0].sentence, HARD, category))
    return out


def classify(turn: Turn, sentence: str) -> Insight | None:
    """The first insight one sentence of one turn states, if any (no conversation around it)."""
    found = extract_with_sources([Turn(turn.role, sentence, turn.name, turn.at)], 1)
    return found[0].insight if found else None


def extract_with_sources(turns: list[Turn], max_items: int) -> list[Sourced]:
    """What `extract` gives, each insight with the turn and the span it came from."""
    found: list[tuple[int, Sourced]] = []
    previous: Turn | None = None
    for index, turn in enumerate(turns):
        if turn.role == "tool":
            continue  # tool output states results, not the user's facts or rules
        if turn.role == "assistant":
            reads = _assistant_reads(turn)
        else:
            reads = _merge(_read_turn(turn, _context(previous)))
        previous = turn
        for read in reads:
            insight = _insight(read, turn, turn.content[read.start:read.end], read.instead)
            if insight is None or any(near_duplicate(insight.content, seen.insight.content, 0.8) for _, seen in found):
                continue
            found.append((len(found), Sourced(insight, index, read.start, read.end)))
    found.sort(key=lambda pair: (-pair[1].insight.confidence, pair[0]))
    return [sourced for _, sourced in found[:max_items]]


def extract(turns: list[Turn], max_items: int) -> list[Insight]:
    """Facts and rules stated in `turns`, strongest first, without near-duplicates."""
    return [sourced.insight for sourced in extract_with_sources(turns, max_items)]
