"""The assistant's side of a coding conversation, as the extractive engine needs it: what its last
question asks for (a fact: "How many replicas run in prod?"; a decision: "What debounce window do
you want?"; permission: "Should I fix both now?"), which words it proposed ("we could mock the
import with autodoc_mock_imports"), and which of its sentences restate what the user said
("Understood, every goroutine must take a context"). Anything else the assistant says (narration,
guesses, filler) is never kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.core.model.statements import Turn

_I = re.IGNORECASE
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_LEAD = re.compile(r"^(?:(?:ok(?:ay)?|so|and|also|great|sure|got it)[,.!]?\s+)+", _I)
_PERMISSION = re.compile(r"^(?:should i|shall i|do you (?:also )?want (?:me|a|an|us)\b|want me|"
                         r"would you (?:also )?like|can i|may i|is it ok if i|"
                         r"ok if i|should we (?:also )?(?:fix|do|run|add)|do you want a)\b", _I)
_FACT_QUESTION = re.compile(r"\b(?:how many|how much|how big|is there|are there|do you have|what'?s the current|"
                            r"what is the current|does it|is that|are the|are they|do you (?:use|run|support)|"
                            r"did \w+)\b|\b(?:do|does) (?:you|we)\b[^?]*\b(?:use|run|support)\?$", _I)
# A question about a choice still to make; any other question asks what is ("Which sensor is it?",
# "Are you training in bf16 or fp16?", "Which framework is the CLI built on?").
_DECISION_QUESTION = re.compile(r"\b(?:want|prefer|should|shall|ok|okay|rather|like|go with|pick|choose|fine with)\b",
                                _I)
# A way forward offered, as a guess or an option ("we could mock the import") or as what would
# mend the problem ("aggregating per order before the join fixes the fan-out", "the cheaper route").
_PROPOSAL = re.compile(r"\b(?:could|would|might|should|either|suggest|recommend|option|probably|likely|if|"
                       r"fix(?:es)?|solves?|avoids?|instead|cheaper|simpler|safer|better|route|plan)\b", _I)
CONTENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_COMMON = frozenset("could would might should either suggest recommend option probably likely that this there "
                    "with what which want your have does just only also then than them they into from about "
                    "more much make sure okay".split())

ACK = re.compile(r"^(?:understood|got it|noted|ok(?:ay)?|sure|thanks|will do|right|perfect|great|sounds good)\b"
                 r"[,:.!]?\s*[—–-]?\s+", _I)
ACK_TAIL = re.compile(r"[,\s]+(?:understood|noted|got it|will do)[.!]*$", _I)
_STANDING = re.compile(r"\b(?:from now on|going forward|in future|per your preference|noted for future|"
                       r"will (?:always|never|keep))\b|^will keep\b", _I)
_SHARED_DECISION = re.compile(r"\b(?:we(?:'ve| have)? (?:decided|agreed|settled on|chose)|we'?re going with|"
                              r"let'?s go with)\b", _I)


@dataclass(frozen=True, slots=True)
class Context:
    """What the assistant's turn before a user turn asked and proposed."""
    answer: str | None = None  # "fact", "decision", "permission", or None (no question, or another kind)
    proposal: frozenset[str] = frozenset()  # content words of its proposals and questions, lowercase
    work: bool = False  # the session is work talk as a whole: names count as work talk

    def echoes(self, text: str) -> bool:
        """`text` takes up a word the assistant proposed or asked about."""
        return bool({_stem(w) for w in CONTENT_WORD.findall(text)} & self.proposal)


def _stem(word: str) -> str:
    """A word without its ending, so "aggregate" takes up "Aggregating" and "projecting" "project"."""
    return re.sub(r"(?:ing|ed|es|e|s)$", "", word.lower()) if len(word) > 5 else word.lower()


def context_of(previous: Turn | None, work: bool = False) -> Context:
    """The context a user turn answers: the assistant turn just before it (tool turns skipped)."""
    if previous is None or previous.role != "assistant":
        return Context(work=work)
    parts = [s.strip() for s in _SENTENCES.split(previous.content) if s.strip()]
    asked = [p for p in parts if p.endswith("?")]
    answer = None
    if asked:
        question = _LEAD.sub("", asked[-1])
        answer = "permission" if _PERMISSION.match(question) else "fact" if _FACT_QUESTION.search(question) \
            else "decision" if _DECISION_QUESTION.search(question) else "fact"
    proposed = {w.lower() for p in parts if _PROPOSAL.search(p) or p.endswith("?") for w in CONTENT_WORD.findall(p)}
    return Context(answer, frozenset(_stem(w) for w in proposed - _COMMON), work)


def restates(sentence: str) -> re.Match[str] | None:
    """Whether an assistant's sentence restates the user ("Understood, ...", "..., noted", "So we
    decided ...", "I'll leave releases to CI from now on"); the match of its acknowledgement, if it
    opens with one, else an empty match."""
    ack = ACK.match(sentence)
    if ack:
        return ack
    if ACK_TAIL.search(sentence) or _STANDING.search(sentence) or _SHARED_DECISION.search(sentence):
        return re.match("", sentence)
    return None
