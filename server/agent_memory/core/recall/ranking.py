"""Ranking retrieval candidates: fused relevance, then recency, priority, confidence and scope."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from agent_memory.core.model.clock import parse_ts
from agent_memory.core.model.models import Entry, Priority, Scope

PRIORITY_VALUE = {Priority.LOW: 0.0, Priority.MEDIUM: 0.5, Priority.HIGH: 1.0}
SCOPE_VALUE = {Scope.AGENT: 1.0, Scope.TEAM: 0.5, Scope.GLOBAL: 0.0}
SPEAKER_MAX_CHARS = 40  # a transcript line's "Name:" prefix is at most this long
MENTION_SHARE = 0.5  # a name only mentioned, against one who speaks (see `_mentions`)
NEIGHBOR_REACH = 2  # entries written just before or after, up to this many places away
NEIGHBOR_DECAY = 0.5  # each place further away counts this much less
DECIMALS = 4  # every score and score part is shown rounded to this many decimals


@dataclass(frozen=True, slots=True)
class RankWeights:
    keyword: float = 0.5
    semantic: float = 0.5
    name_boost: float = 0.25
    neighbor: float = 0.35
    recency: float = 0.05
    priority: float = 0.03
    confidence: float = 0.03
    scope: float = 0.02
    recency_half_life_days: float = 30.0


PARTS = ("keyword", "semantic", "match", "relevance", "neighbors", "recency", "priority", "confidence", "scope")


@dataclass(slots=True)
class Candidate:
    entry: Entry
    seq: int
    keyword: float = 0.0  # raw BM25 (higher is better)
    semantic: float = 0.0  # cosine similarity
    coverage: float = 0.0  # share of the query's IDF weight found in the entry (0..1)
    score: float = 0.0
    matched: float = 0.0  # `match`, rounded as in the score parts (for the relevance floor)
    raw: tuple[float, ...] = ()  # the score parts unrounded, in PARTS order (set by `rank`)

    @property
    def parts(self) -> dict[str, float]:
        """The score parts, rounded (built on demand: most candidates never show theirs)."""
        return {name: round(value, DECIMALS) for name, value in zip(PARTS, self.raw, strict=True)}


def _normalise(values: dict[str, float]) -> dict[str, float]:
    """Scale to the best candidate (BM25: 0 means no query term, so it stays 0)."""
    top = max(values.values(), default=0.0)
    return {k: max(v, 0.0) / top for k, v in values.items()} if top > 0 else {k: 0.0 for k in values}


def _discriminating(values: dict[str, float]) -> dict[str, float]:
    """BM25 above what every candidate has, scaled to the best: a keyword score that all the
    candidates reach tells none of them apart (a query word in every one, such as the name of the
    person a store is about), so it counts for none, and the meaning decides; all equal: 0 for all.
    Usually some candidate (found by meaning) holds no query word, and this is `_normalise`."""
    if not values:
        return {}
    low, high = max(min(values.values()), 0.0), max(values.values())
    return {k: max(v - low, 0.0) / (high - low) for k, v in values.items()} if high > low else {k: 0.0 for k in values}


def _min_max(values: dict[str, float]) -> dict[str, float]:
    """Spread over the candidates' own range (cosine has no natural zero between related and not)."""
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    return {k: (v - low) / (high - low) for k, v in values.items()} if high > low else {k: 1.0 for k in values}


def _speaker(content: str) -> str | None:
    """Who said it, when the memory is a transcript line ("Caroline: I went ..."): the short
    text before the first colon, if it is a name-like word or two; else None."""
    head, colon, _ = content[:SPEAKER_MAX_CHARS + 1].partition(":")
    if not colon or not head or len(head.split()) > 2 or not head[0].isupper():
        return None
    return head.strip()


def _mentions(content: str, patterns: list[tuple[str, re.Pattern[str]]]) -> float:
    """The share of the query's names the memory is about: a name counts fully when its bearer
    is the speaker of a transcript line ("Caroline: I went ..." is about Caroline, in the first
    person), `MENTION_SHARE` when it is only mentioned (another speaker talking to or about them)."""
    if not patterns:
        return 0.0
    speaker = _speaker(content)
    hits = 0.0
    for name, pattern in patterns:
        if name == speaker:
            hits += 1.0
        # A name that is not even a substring cannot match its word-bounded pattern: skip the regex.
        elif name in content and pattern.search(content):
            hits += MENTION_SHARE
    return hits / len(patterns)


def rank(candidates: list[Candidate], *, names: set[str], weights: RankWeights, now_epoch: float,
         use_keyword: bool, use_semantic: bool) -> list[Candidate]:
    """Score every candidate (its score parts in `raw`, rounded in `parts`) and return them best first."""
    # With meaning in use, keyword scores count only above what every candidate has (see `_discriminating`).
    scale = _discriminating if use_semantic else _normalise
    keyword = scale({c.entry.id: c.keyword for c in candidates}) if use_keyword else {}
    semantic = _min_max({c.entry.id: c.semantic for c in candidates}) if use_semantic else {}
    w_kw = weights.keyword if use_keyword else 0.0
    w_sem = weights.semantic if use_semantic else 0.0
    total = (w_kw + w_sem) or 1.0
    patterns = [(name, re.compile(rf"\b{re.escape(name)}\b")) for name in sorted(names)]
    boost = weights.name_boost
    relevance: list[float] = []
    for c in candidates:
        entry = c.entry
        kw, sem = keyword.get(entry.id, 0.0), semantic.get(entry.id, 0.0)
        # `match`, inline: the larger of the signals in use
        best = max(c.semantic if use_semantic else 0.0, c.coverage if use_keyword else 0.0, 0.0)
        c.raw = (kw, sem, best)
        c.matched = round(best, DECIMALS)
        mentions = _mentions(entry.content, patterns) if patterns else 0.0
        relevance.append((w_kw * kw + w_sem * sem) / total + boost * mentions)
    # Each candidate's place by (partition, sequence number): its neighbours are looked up there.
    position = {(c.entry.owner_agent_id, c.entry.scope, c.entry.namespace, c.seq): i for i, c in enumerate(candidates)}
    reach = [(NEIGHBOR_DECAY ** (distance - 1), distance) for distance in range(1, NEIGHBOR_REACH + 1)]
    half_life = max(weights.recency_half_life_days, 1e-6) * 86400
    ln2 = math.log(2)
    w_recency, w_priority, w_confidence, w_scope = weights.recency, weights.priority, weights.confidence, weights.scope
    w_neighbor = weights.neighbor
    for i, c in enumerate(candidates):
        e = c.entry
        # The best relevance among the entries written around it in the same partition (the
        # turns of a conversation around the one that answers), fading with distance.
        neighbour = 0.0
        partition = (e.owner_agent_id, e.scope, e.namespace)
        for fade, distance in reach:
            for seq in (c.seq - distance, c.seq + distance):
                j = position.get((*partition, seq))
                if j is not None:
                    neighbour = max(neighbour, relevance[j] * fade)
        own = relevance[i]
        # Capped at the entry's own relevance: neighbours can at most double what it matches itself,
        # never lift an entry that matches nothing (a fact beside the answer, about something else).
        smoothed = own + min(w_neighbor * neighbour, own)
        recency = w_recency * math.exp(-max(0.0, now_epoch - _epoch(e.updated_at)) * ln2 / half_life)
        priority = w_priority * PRIORITY_VALUE[e.priority]
        confidence = w_confidence * e.confidence
        scope = w_scope * SCOPE_VALUE[e.scope]
        c.raw = (*c.raw, own, smoothed - own, recency, priority, confidence, scope)
        c.score = round(smoothed + (recency + priority + confidence + scope), 6)
    return sorted(candidates, key=lambda c: (c.score, c.entry.created_at, c.entry.id), reverse=True)


def match(c: Candidate, *, use_keyword: bool, use_semantic: bool) -> float:
    """How surely the entry is about the query, on an absolute scale (not relative to the other
    candidates, so it can say "nothing here"): the larger of its cosine similarity and its
    keyword coverage, among the signals in use."""
    return max(c.semantic if use_semantic else 0.0, c.coverage if use_keyword else 0.0, 0.0)


@lru_cache(maxsize=16384)
def _epoch(timestamp: str) -> float:
    """Seconds since the epoch (timestamps repeat across calls: each is parsed once)."""
    return parse_ts(timestamp).timestamp()
