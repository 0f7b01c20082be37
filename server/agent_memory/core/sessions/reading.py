"""One turn read clause by clause: which spans of it state something worth keeping, and of what kind.

A user (or system) turn is cut into clauses (`clauses`); what the speaker takes back is dropped
and its correction kept (`retraction`); each clause is then ruled out (`negatives`: questions,
hypotheticals, quotes, negations, status reports, one-off requests) or read as a decision, rule,
preference or fact (`kinds`). The assistant's turn before gives context (`dialogue`): a short
answer takes the kind its question asked for, and an imperative taking up its proposal is a
decision ("mock grpc with autodoc_mock_imports" after "we could mock the import"), where other
imperatives about the task at hand are one-off requests. Adjacent clauses of one sentence that say
the same kind of thing, or round each other off ("..., that's a hard rule"), are kept as one span.
Of an assistant's turn only its restatements are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.core.model.statements import Turn
from agent_memory.core.sessions import kinds, negatives, worktalk
from agent_memory.core.sessions.clauses import HARD, SOFT, clauses
from agent_memory.core.sessions.dialogue import ACK_TAIL, Context, restates
from agent_memory.core.sessions.retraction import State, is_directive, settle

_I = re.IGNORECASE
_LEAD = re.compile(
    r"^(?:(?:please(?=,)|pls(?=,)|no(?=,)|nah|nope|also|and|so|oh|btw|by the way|ok(?:ay)?|well|anyway|one more thing|"
    r"yeah|yes|yep|"
    r"wow|haha|hey|honestly|hmm+|nice|sweet|cool|great|good|perfect|phew|fyi|remember|note|plus|but|eh|er|right|"
    r"sure|actually(?!,?\s+no\b)|👍)(?:[,:!.]+\s*|\s+))+", _I)
_LABEL = re.compile(r"^(?![^:]*\b(?:decision|decided|rule|policy|convention|verdict|answer|plan|preference|style)\b)"
                    r"[\w\s',-]{1,40}:\s+(?=\S)", _I)
_TAIL = re.compile(r"(?:[,\s]+(?:btw|thanks|thank you|thx|ty|cheers|though|obviously|that'?s it|for the record|fyi|"
                   r"lol|anyway|anymore))+[.!]*$", _I)
_LISTENER = re.compile(r"\b(?:you|your|you're|you've|yours)\b", _I)
# "fix both", "add it to the checklist", "redo that": a request about what is at hand.
_ANAPHORIC = re.compile(r"^\S+\s+(?:it|that|this|them|both|one|those|these|the rest)\b", _I)
_RULE_TAIL = re.compile(r"^(?:always|never|ever|without exception|no exceptions)\b", _I)
# The assistant about its own work: "I'll add it to ...", "I've updated ...", "Added /healthz ...".
_OWN_ACTION = re.compile(r"^(?:i'll|i will|i've|i have|i'm going to|i am going to|let me|i just|i)\s|"
                         r"^(?:added|updated|fixed|changed|removed|renamed|moved|wrote|created|wired|done)\b", _I)
# What the speaker likes, said first: the rest of the clause is what they like ("I like rich output but it
# must degrade nicely when stdout isn't a tty").
_OPENS_PREFERENCE = re.compile(r"^(?:i|we)\s+(?:really\s+|also\s+|strongly\s+|much\s+)?(?:prefer|like|love|'d rather|"
                               r"would rather)\b", _I)
_QUOTE_END = re.compile(r"\b(?:said|says|reckons?|claims?|claimed|thinks)$", _I)


@dataclass
class Read:
    """A span of a turn as read: the category it states (or why it is never kept)."""
    start: int
    end: int
    sentence: int
    cut: str
    category: str | None = None
    why: str | None = None
    annotation: bool = False  # "that's a hard rule": makes the clause before a rule
    anaphora: bool = False  # "I prefer that ...": about the clause before
    so: bool = False  # opens with "so": a consequence of the clause before
    fragment: bool = False  # without a verb: "never in the repo", "headers only"
    instead: str = ""  # for a correction without a verb ("no wait, 30"), what it corrects


def bare(text: str, label: bool = False) -> str:
    """The clause without its lead-in ("yeah", "fyi", "Context:"; with `label`, a label stays:
    "Churn model: scikit-learn 1.4" names what it is about) and tail ("btw", "thanks")."""
    out = _LEAD.sub("", text.strip()).strip()
    out = _LABEL.sub("", out) if len(out.split(":")[0].split()) <= 6 and not label else out
    out = _TAIL.sub("", out).strip(" ,;:-")
    return _LEAD.sub("", out).strip()


def family(category: str) -> str:
    """The corpus kind of a category: decision, preference, rule or fact."""
    return {"instruction": "rule", "constraint": "rule", "profile": "fact"}.get(category, category)


def _category(text: str, context: Context, *, correction: bool, answering: bool, opens: bool,
              withdrew_request: bool, first: bool) -> tuple[str | None, str | None]:
    """(category, None) for a clause worth keeping, (None, why) for one never kept, (None, None) for
    a clause that says nothing by itself (it may still round off the clause before it)."""
    labelled, text = kinds.labelled(text)
    names = context.work
    if correction and is_directive(text.split(",")[0]) and not kinds.is_decision(text) \
            and kinds.rule_category(text, True, names) is None and (worktalk.is_technical(text, names) or
                                                                   worktalk.is_imperative(text) or
                                                       withdrew_request):
        return (None, "one-off request") if negatives.is_one_off(text) else ("decision", None)
    condition = kinds.CONDITION.match(text)
    if condition and not negatives.why_not(condition["then"]) and kinds.rule_category(text):
        return kinds.rule_category(text), None  # "if a migration fails, roll back first": a rule, not a guess
    why = negatives.why_not(text)
    if why is not None:
        return None, why
    if labelled:
        return labelled, None
    if _OPENS_PREFERENCE.match(text) and kinds.is_preference(text, names):
        return "preference", None  # "I like rich output but it must degrade nicely", "I prefer that you explain ..."
    rule = kinds.rule_category(text, opens, names)
    addressed = rule and worktalk.is_technical(text, names)  # "you must run make lint before pushing"
    if _LISTENER.search(text) and not worktalk.is_imperative(text) and not addressed:
        return None, "about the listener"  # "you're doing great", "that must be so hard for you"
    echoes = context.echoes(text)
    if kinds.is_decision(text, echoes, names):
        return "decision", None
    if context.proposal and context.answer != "permission" and kinds.TAKE_OPTION.match(text):
        return "decision", None  # "use that", "yes do that" after the assistant's proposal
    fragment = worktalk.is_fragment(text)
    imperative = worktalk.is_imperative(text)
    if answering and context.answer in ("fact", "decision") and (fragment or imperative) \
            and not kinds.is_preference(text, names) and (context.answer == "decision" or fragment) \
            and not (rule and kinds.STANDING_WORDS.search(text)):  # "always private nodes, ever": a rule
        return context.answer, None
    if negatives.is_request(text):
        return None, "one-off request"
    one_off = (imperative or rule == "instruction") and negatives.is_one_off(text)
    taking_up = echoes or first and context.proposal and context.answer != "permission" and not _ANAPHORIC.match(text)
    if imperative and taking_up and not one_off and not kinds.STANDING_WORDS.search(text):
        return "decision", None  # "mock grpc with autodoc_mock_imports" after "we could mock the import"
    if rule is not None:
        return (None, "one-off request") if rule == "instruction" and one_off else (rule, None)
    if kinds.is_preference(text, names):
        return (None, "one-off request") if one_off else ("preference", None)
    if first and context.proposal and context.answer is None and echoes and fragment:
        return "decision", None  # "hash and length only" after "a safer option is to log a hash and the length"
    if negatives.is_status(text):
        return None, "status"
    fact = kinds.fact_category(text, names)
    if fact is not None:
        return fact, None
    return (None, "one-off request") if imperative else (None, None)


def _clauses_read(turn: Turn, context: Context) -> list[Read]:
    found = clauses(turn.content)
    states = settle([c.text for c in found])
    answering = True  # the turn's first clause, and the fragments right after it, answer the question
    out: list[Read] = []
    for index, (clause, (state, offset)) in enumerate(zip(found, states, strict=True)):
        read = Read(clause.start, clause.end, clause.sentence, clause.cut)
        out.append(read)
        if state in (State.WITHDRAWN, State.MARKER):
            read.why = "retracted"
            continue
        said = clause.text[offset:]
        read.start += offset + len(said) - len(said.lstrip(" ,.!"))  # a correction starts after its marker
        text = bare(said)
        if kinds.ANNOTATION.match(text):
            read.annotation = True
            continue
        if negatives.is_quote(text) or index and _QUOTE_END.search(found[index - 1].text):
            read.why = "quote"  # "Priya reckons" + "we're calling the address API per message"
            continue
        read.anaphora = bool(kinds.ANAPHORA.match(text))
        read.so = bool(re.match(r"^(?:and\s+)?so\b", clause.text, _I))
        read.fragment = worktalk.is_fragment(text)
        correction = state is State.CORRECTION
        taken = [bare(found[i].text) for i in range(index) if states[i][0] is State.WITHDRAWN]
        if correction and worktalk.is_fragment(text.split(",")[0]) and taken:
            read.instead = taken[-1]  # "30" says little without "set the pool size to 20"
        answering = answering and (not out[:-1] or read.fragment) and clause.sentence == found[0].sentence
        short = len(text.split()) < 2 or (len(text.split()) < 3 and not worktalk.has_detail(text))
        one_word_answer = answering and not out[:-1] and text.strip(".") and (
            context.answer == "decision" or context.answer == "fact" and (worktalk.has_detail(text) or len(
                text.split()) == 1 and negatives.why_not(text) is None))  # "typer." names what is, "for plotting" no
        if short and not correction and not kinds.TAKE_OPTION.match(text) and not one_word_answer:
            continue  # a word or two, unless it answers the question ("postgres", "20") or corrects
        read.category, read.why = _category(text, context, correction=correction, answering=answering,
                                            opens=clause.cut == HARD,
                                            withdrew_request=bool(taken) and worktalk.is_imperative(taken[-1]),
                                            first=not any(r.category or r.why for r in out[:-1]))
    return out


def _merge(reads: list[Read], turn_text: str, names: bool) -> list[Read]:
    """Clauses of one sentence kept as one, so no memory loses the details (hosts, ports, versions)
    its sentence holds: the same kind said twice ("we run Kafka 3.6 on MSK, the topic has 24
    partitions"), a statement and its tail ("..., oversells are expensive"), a statement and the
    remark that makes it a rule ("..., that's a hard rule") or a preference ("..., I prefer that"),
    and any two kept clauses cut at a comma, of the first kind that is more than a fact ("min target
    is Wear OS 3, don't use Wear OS 4 APIs" is a rule). Clauses cut without punctuation (run-ons)
    stay apart."""
    out: list[Read] = []
    for read in reads:
        last = out[-1] if out else None
        near = last is not None and read.cut == SOFT and read.sentence == last.sentence
        joined = near and last.why is None
        if joined and read.annotation:
            _annotate(out, read)
        elif near and read.anaphora and read.why is None and last.why in (None, "one-off request"):
            last.end, last.category, last.why = read.end, "preference", None
        elif joined and last.category and read.why is None and (
                read.category is None or family(read.category) == family(last.category)):
            last.end = read.end
        elif near and last.why is None and read.fragment and (family(read.category or "") == "rule" or (
                _RULE_TAIL.match(turn_text[read.start:read.end]) and
                worktalk.is_technical(turn_text[last.start:read.end], names))):
            last.end = read.end  # "secrets are stored in Vault, never in the repo", "..., always": one rule
            last.category = "constraint" if family(last.category or "") != "rule" else last.category
        elif joined and last.category and read.category and read.so and family(read.category) == "rule":
            last.end = read.end  # "consumers are at-least-once, so handlers have to be idempotent": one rule
            last.category = read.category
        elif joined and last.category and read.category:
            last.end = read.end  # "never deploy on weekends, I run the on-call rota then": one memory, keys kept
            last.category = read.category if family(last.category) == "fact" else last.category
        else:
            out.append(read)
    return [read for read in out if read.category]


def _annotate(out: list[Read], annotation: Read) -> None:
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


def read_user_turn(turn: Turn, context: Context) -> list[Read]:
    """The spans of a user (or system) turn worth keeping, each with its category."""
    return _merge(_clauses_read(turn, context), turn.content, context.work)


def read_assistant_turn(turn: Turn, work: bool = False) -> list[Read]:
    """The assistant's restatements only, a sentence at a time: "Understood, every goroutine must take
    a context", "Redis for sessions, understood", "So we decided to use Redis"."""
    out = []
    by_sentence: dict[int, list] = {}
    for clause in clauses(turn.content):
        by_sentence.setdefault(clause.sentence, []).append(clause)
    for parts in by_sentence.values():
        start, end = parts[0].start, parts[-1].end
        said = restates(turn.content[start:end])
        if said is None:
            continue
        start += said.end()
        text = bare(ACK_TAIL.sub("", turn.content[start:end]))
        if len(text.split()) < 3 or negatives.why_not(text) or negatives.is_status(text):
            continue
        if _OWN_ACTION.match(text) and not negatives.STANDING.search(text):
            continue  # "Sounds good, I'll add it to scripts/x.py": what it does now, not what the user said
        category = kinds.rule_category(text, True, work) or ("decision" if kinds.is_decision(text, True) else None) \
            or ("preference" if kinds.is_preference(text, work) else kinds.fact_category(text, work))
        if category:
            out.append(Read(start, end, parts[0].sentence, HARD, category))
    return out
