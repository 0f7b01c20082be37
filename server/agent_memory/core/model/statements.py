"""What a session says and what is distilled from it: a turn of a conversation, and an insight
(a fact or a rule) taken from turns, supplied by the caller or sampled from a model."""

from __future__ import annotations

from dataclasses import dataclass

COMPACTION_TAG = "compaction"  # the tag of a compaction summary (one entry standing in for older turns)


@dataclass(frozen=True, slots=True)
class Turn:
    role: str
    content: str
    name: str | None = None
    at: str | None = None


@dataclass(frozen=True, slots=True)
class Insight:
    kind: str  # "fact" (layer long_term) or "rule" (layer meta)
    content: str
    confidence: float
    category: str  # preference | decision | profile | constraint | instruction | supplied | sampled
    replaces: str | None = None  # a sampled fact may name the remembered fact it updates
