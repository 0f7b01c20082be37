"""Ranking retrieval candidates: fused relevance, then recency, priority, confidence and scope."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from agent_memory.core.clock import parse_ts
from agent_memory.core.models import Entry, Priority, Scope

PRIORITY_VALUE = {Priority.LOW: 0.0, Priority.MEDIUM: 0.5, Priority.HIGH: 1.0}
SCOPE_VALUE = {Scope.AGENT: 1.0, Scope.TEAM: 0.5, Scope.GLOBAL: 0.0}


@dataclass(frozen=True, slots=True)
class RankWeights:
    keyword: float = 0.5
    semantic: float = 0.5
    name_boost: float = 0.15
    neighbor: float = 0.25
    recency: float = 0.05
    priority: float = 0.03
    confidence: float = 0.03
    scope: float = 0.02
    recency_half_life_days: float = 30.0


@dataclass(slots=True)
class Candidate:
    entry: Entry
    seq: int
    keyword: float = 0.0  # raw BM25 (higher is better)
    semantic: float = 0.0  # cosine similarity
    coverage: float = 0.0  # share of the query's IDF weight found in the entry (0..1)
    parts: dict[str, float] = field(default_factory=dict)
    score: float = 0.0


def _normalise(values: dict[str, float]) -> dict[str, float]:
    """Scale to the best candidate (BM25: 0 means no query term, so it stays 0)."""
    top = max(values.values(), default=0.0)
    return {k: max(v, 0.0) / top for k, v in values.items()} if top > 0 else {k: 0.0 for k in values}


def _min_max(values: dict[str, float]) -> dict[str, float]:
    """Spread over the candidates' own range (cosine has no natural zero between related and not)."""
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    return {k: (v - low) / (high - low) for k, v in values.items()} if high > low else {k: 1.0 for k in values}


def _mentions(content: str, patterns: list[re.Pattern[str]]) -> float:
    if not patterns:
        return 0.0
    hits = sum(1 for pattern in patterns if pattern.search(content))
    return hits / len(patterns)


def rank(candidates: list[Candidate], *, names: set[str], weights: RankWeights, now_epoch: float,
         use_keyword: bool, use_semantic: bool) -> list[Candidate]:
    """Score every candidate (score parts kept in `parts`) and return them best first."""
    keyword = _normalise({c.entry.id: c.keyword for c in candidates}) if use_keyword else {}
    semantic = _min_max({c.entry.id: c.semantic for c in candidates}) if use_semantic else {}
    w_kw = weights.keyword if use_keyword else 0.0
    w_sem = weights.semantic if use_semantic else 0.0
    total = (w_kw + w_sem) or 1.0
    relevance: dict[str, float] = {}
    patterns = [re.compile(rf"\b{re.escape(name)}\b") for name in sorted(names)]
    for c in candidates:
        base = (w_kw * keyword.get(c.entry.id, 0.0) + w_sem * semantic.get(c.entry.id, 0.0)) / total
        c.parts = {"keyword": round(keyword.get(c.entry.id, 0.0), 4),
                   "semantic": round(semantic.get(c.entry.id, 0.0), 4),
                   "match": round(match(c, use_keyword=use_keyword, use_semantic=use_semantic), 4)}
        relevance[c.entry.id] = base + weights.name_boost * _mentions(c.entry.content, patterns)
    by_position = {(c.entry.owner_agent_id, c.entry.scope, c.entry.namespace, c.seq): c for c in candidates}
    half_life = max(weights.recency_half_life_days, 1e-6) * 86400
    for c in candidates:
        key = (c.entry.owner_agent_id, c.entry.scope, c.entry.namespace)
        neighbours = [by_position.get((*key, c.seq + step)) for step in (-1, 1)]
        neighbour = max((relevance[n.entry.id] for n in neighbours if n is not None), default=0.0)
        own = relevance[c.entry.id]
        smoothed = own + weights.neighbor * neighbour
        recency = math.exp(-max(0.0, now_epoch - _epoch(c.entry.updated_at)) * math.log(2) / half_life)
        extras = {
            "recency": weights.recency * recency,
            "priority": weights.priority * PRIORITY_VALUE[c.entry.priority],
            "confidence": weights.confidence * c.entry.confidence,
            "scope": weights.scope * SCOPE_VALUE[c.entry.scope],
        }
        c.parts.update({"relevance": round(own, 4), "neighbors": round(smoothed - own, 4)})
        c.parts.update({k: round(v, 4) for k, v in extras.items()})
        c.score = round(smoothed + sum(extras.values()), 6)
    return sorted(candidates, key=lambda c: (c.score, c.entry.created_at, c.entry.id), reverse=True)


def match(c: Candidate, *, use_keyword: bool, use_semantic: bool) -> float:
    """How surely the entry is about the query, on an absolute scale (not relative to the other
    candidates, so it can say "nothing here"): the larger of its cosine similarity and its
    keyword coverage, among the signals in use."""
    return max(c.semantic if use_semantic else 0.0, c.coverage if use_keyword else 0.0, 0.0)


def _epoch(timestamp: str) -> float:
    return parse_ts(timestamp).timestamp()
