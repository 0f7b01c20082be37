"""The deterministic extractive engine: stated preferences, decisions, profile facts, constraints
and instructions become facts and rules; chit-chat, questions and tool output are left out.

Pure text rules, no model: the same transcript always gives the same result. First-person
statements are rewritten in the third person ("I prefer tabs" -> "The user prefers tabs") so a
fact still reads right when it is recalled in another session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.core.model.statements import Insight, Turn
from agent_memory.core.recall.context import near_duplicate

ROLES = ("user", "assistant", "tool", "system")


_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_CHATTER = re.compile(
    r"^(hi|hello|hey|thanks|thank you|thx|cheers|bye|goodbye|good (morning|afternoon|evening|night)|lol|haha+|"
    r"ok(ay)?|sure|great|cool|nice|awesome|perfect|sounds good|got it|no problem|you'?re welcome|yes|no|yep|"
    r"nope|right|exactly|i see|hmm+|oh|wow)\b[\s\w,!.']{0,30}$", re.IGNORECASE)
_LEAD = re.compile(r"^(?:(?:please|also|and|so|oh|btw|by the way|ok(?:ay)?|well|anyway|one more thing|yeah|yes|"
                   r"yep|wow|haha|hey|honestly|actually|hmm)[,:!]?\s+)+",
                   re.IGNORECASE)

_INSTRUCTION = re.compile(
    r"^(always|never|don'?t|do not|avoid|make sure|ensure|remember to|be sure to|use|prefer|write|run|put|call|"
    r"add|include|reply|respond|answer|format|deploy|store|log)\b|"
    r"\b(from now on|going forward|in (the )?future|every time|whenever)\b", re.IGNORECASE)
# Encouragement and elliptical narrative that look like instructions: "Don't give up!", "Always here
# to help", "Never saw this coming".
_PRAISE = re.compile(
    r"^(keep (it|going|up)|never give up|always remember|"
    r"don'?t (worry|give up|stop|forget|let|be|feel|quit|miss|lose|hesitate|panic|doubt)|"
    r"always (here|there|up|good|happy|great|glad|fun|nice|a)|never (had|saw|seen|been|thought|knew|expected|"
    r"imagined|felt|got|a))\b", re.IGNORECASE)
_CONSTRAINT = re.compile(
    r"\b(must not|mustn'?t|must|have to|has to|is required|are required|required to|not allowed|no more than|"
    r"at most|at least|deadline|due (by|on)|budget|cannot exceed|can'?t exceed|should (always|never|not))\b",
    re.IGNORECASE)
# "It must have been great", "that must be hard", "I have to say": not constraints.
_EPISTEMIC = re.compile(
    r"\bmust-have\b|\bmust(\s+have|'ve|\s+feel|\s+be\s+(a|an|so|really|very|such|hard|tough|nice|great|fun|amazing|awesome|"
    r"exciting|lovely|scary|difficult|wonderful|special|proud|cool|beautiful))\b|"
    r"\bha(ve|s) to (say|admit|go|run|tell|thank|ask)\b", re.IGNORECASE)
_PREFERENCE = re.compile(
    r"\b(i|we)\s+(?:really\s+|strongly\s+|usually\s+|generally\s+|definitely\s+|also\s+|much\s+|now\s+|"
    r"actually\s+|still\s+|no\s+longer\s+)*"
    r"(prefer|like|love|enjoy|hate|dislike|want|would rather|can'?t stand|don'?t like|do not like)\b"
    r"(?!\s+(it|that|this|you|to (tell|say|ask|know|show|share|see|hear|thank))\b)|"
    r"\bi'd rather\b|\bmy favou?rite\b|\bwe'd rather\b",
    re.IGNORECASE)
_DECISION = re.compile(
    r"\b(i|we)\s+(have\s+|'ve\s+)?(decided|chose|picked|agreed|settled on|will go with|are going with|"
    r"will use|are going to use|are switching to|switched to|will switch to)\b|"
    r"\b(we're|we've|i've|i'm|we'll|i'll)\s+(decided|going with|going to use|switching to|go with|use)\b|"
    r"\blet'?s (go with|use|stick with|switch to)\b|\b(the )?decision (is|was)\b|\bwe agreed\b",
    re.IGNORECASE)
_PROFILE = re.compile(
    r"\bmy name is\b|\bi(?: am|'m) (a|an|the|based in|from|responsible for|working on|in charge of)\b|"
    r"\bi work (at|for|as|on|in)\b|\bi live in\b|\bi'm based\b|\b(we|i) (use|run|host|deploy with|build with)\b|"
    r"\b(my|our) (team|role|job|company|manager|timezone|time zone|email|office|stack|project|repo|"
    r"repository|product|deadline|budget|customer|client)s?\b\s+(is|are|uses|runs|lives|sits)\b",
    re.IGNORECASE)
_QUESTION_START = re.compile(r"^(what|why|how|when|where|who|which|can|could|would|should|do|does|did|is|are|"
                             r"will|shall|may)\b", re.IGNORECASE)

_ADVERBS = {"really", "always", "never", "usually", "also", "still", "just", "strongly", "generally", "often",
            "sometimes", "definitely", "mostly", "only", "actually", "much", "rarely", "normally", "now", "no",
            "longer"}
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes", "was": "was", "don't": "doesn't",
              "dont": "doesn't", "can": "can", "will": "will", "would": "would", "should": "should",
              "could": "could", "must": "must", "might": "might", "may": "may", "did": "did", "had": "had",
              "didn't": "didn't", "can't": "can't", "won't": "won't", "wouldn't": "wouldn't", "cannot": "cannot",
              "shall": "shall", "need": "needs"}
_CONTRACTIONS = {"i'm": ("is", False), "i've": ("has", False), "i'd": ("would", False), "i'll": ("will", False)}
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?|[^A-Za-z]+")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text) if s and s.strip()]


_PAST = {"chose", "went", "was", "were", "had", "did", "made", "took", "got", "saw", "felt", "thought", "knew",
         "said", "came", "gave", "found", "told", "left", "began", "wrote", "ran", "bought", "brought", "taught",
         "met", "lost", "won", "spent", "kept", "built", "sent", "became", "grew", "drove", "ate", "fell", "heard",
         "held", "led", "paid", "sat", "slept", "spoke", "stood", "understood", "woke", "wore", "quit", "set", "put"}


def _conjugate(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low.endswith("ed") or low in _PAST or not low.isalpha():
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(sentence: str, speaker: str) -> str:
    """Rewrite first-person singular words with `speaker` ("The user", or the turn's name)."""
    tokens = _WORD.findall(sentence.replace("’", "'"))
    out: list[str] = []
    conjugate_next = False
    for token in tokens:
        low = token.lower()
        label = speaker if not out or not "".join(out).strip() else _lower_label(speaker)
        if not token[0].isalpha():
            out.append(token)
            continue
        if conjugate_next:
            if low in _ADVERBS:
                out.append(token)
                continue
            out.append(_conjugate(token))
            conjugate_next = False
            continue
        if low == "i":
            out.append(label)
            conjugate_next = True
        elif low in _CONTRACTIONS:
            out.append(f"{label} {_CONTRACTIONS[low][0]}")
        elif low in ("my", "mine"):
            out.append(f"{label}'s")
        elif low in ("me",):
            out.append(_lower_label(speaker) if out else speaker)
        elif low == "myself":
            out.append("themselves")
        else:
            out.append(token)
    text = "".join(out).strip()
    return text[:1].upper() + text[1:]


def _lower_label(speaker: str) -> str:
    return "the user" if speaker == "The user" else ("the assistant" if speaker == "The assistant" else speaker)


def _speaker(turn: Turn) -> str:
    if turn.name:
        return turn.name
    return {"user": "The user", "assistant": "The assistant"}.get(turn.role, "The operator")


def _clean(sentence: str) -> str:
    text = _LEAD.sub("", sentence.strip()).strip(" -*•\t")
    text = text[:1].upper() + text[1:]
    if text and text[-1] not in ".!":
        text = text.rstrip(",;:") + "."
    return text


def is_smalltalk(sentence: str) -> bool:
    """Greetings, thanks, acknowledgements and fragments of under three words."""
    return len(sentence.split()) < 3 or bool(_CHATTER.match(sentence.strip()))


def _is_chatter(sentence: str) -> bool:
    words = sentence.split()
    return len(words) < 3 or bool(_CHATTER.match(sentence.strip())) or sentence.rstrip().endswith("?") \
        or bool(_QUESTION_START.match(sentence.strip()) and len(words) < 6)


def classify(turn: Turn, sentence: str) -> Insight | None:
    """The insight one sentence of one turn states, if any."""
    if _is_chatter(sentence):
        return None
    text = _clean(sentence)
    speaker = _speaker(turn)
    bare = _LEAD.sub("", sentence)
    about_listener = re.search(r"\byou\b|\byour\b", bare, re.IGNORECASE) and not _INSTRUCTION.match(bare)
    if len(bare.split()) < 4 or about_listener:
        return None  # fragments, and remarks about the listener, are not lasting facts
    if turn.role in ("user", "system"):
        lead = _LEAD.sub("", sentence)
        if _INSTRUCTION.search(lead) and not _PRAISE.match(lead) and not re.match(r"^\s*(i|we)\b", lead, re.I):
            strong = bool(re.search(r"\b(always|never|must|don'?t|do not)\b", sentence, re.IGNORECASE))
            return Insight("rule", text, 0.85 if strong else 0.7, "instruction")
        if _CONSTRAINT.search(sentence) and not _EPISTEMIC.search(sentence):
            return Insight("rule", third_person(text, speaker), 0.8, "constraint")
        if _DECISION.search(sentence):
            return Insight("fact", third_person(text, speaker), 0.8, "decision")
        if _PREFERENCE.search(sentence):
            return Insight("fact", third_person(text, speaker), 0.75, "preference")
        if _PROFILE.search(sentence):
            return Insight("fact", third_person(text, speaker), 0.8, "profile")
        return None
    if turn.role == "assistant" and _DECISION.search(sentence) and re.search(r"\bwe\b|\blet'?s\b", sentence, re.I):
        return Insight("fact", text, 0.6, "decision")  # the assistant restating a shared decision
    return None


@dataclass(frozen=True, slots=True)
class Sourced:
    """An insight and where it was said: the index of its turn and the span of its text there."""
    insight: Insight
    turn: int
    start: int
    end: int


def _spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each sentence `sentences` gives, in `text`."""
    out, at = [], 0
    for part in _SENTENCES.split(text):
        start = text.find(part, at) if part else -1
        if start < 0:
            continue
        at = start + len(part)
        stripped = part.strip()
        if stripped:
            lead = part.find(stripped)
            out.append((start + lead, start + lead + len(stripped)))
    return out


def extract_with_sources(turns: list[Turn], max_items: int) -> list[Sourced]:
    """What `extract` gives, each insight with the turn and the span it came from."""
    found: list[tuple[int, Sourced]] = []
    for index, turn in enumerate(turns):
        if turn.role == "tool":
            continue  # tool output states results, not the user's facts or rules
        for start, end in _spans(turn.content):
            insight = classify(turn, turn.content[start:end])
            if insight is None or any(near_duplicate(insight.content, seen.insight.content, 0.8) for _, seen in found):
                continue
            found.append((len(found), Sourced(insight, index, start, end)))
    found.sort(key=lambda pair: (-pair[1].insight.confidence, pair[0]))
    return [sourced for _, sourced in found[:max_items]]


def extract(turns: list[Turn], max_items: int) -> list[Insight]:
    """Facts and rules stated in `turns`, strongest first, without near-duplicates."""
    return [sourced.insight for sourced in extract_with_sources(turns, max_items)]
