"""memory_retrieve: search, rank, dedupe, compress, inject — over what the caller may read only."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from agent_memory.core.audit import audit_event
from agent_memory.core.budget import Shares, allocate
from agent_memory.core.clock import format_ts
from agent_memory.core.commands import Call
from agent_memory.core.context import ContextLine, assemble, compress, distinct
from agent_memory.core.errors import DomainError, InvalidParams
from agent_memory.core.lineage import Replaced, replaced_facts
from agent_memory.core.models import Domain, Entry, Layer, Scope
from agent_memory.core.ports import (
    AuditSink,
    CandidateFilter,
    RetrievalStore,
    SemanticIndex,
    SemanticUnavailable,
)
from agent_memory.core.ports.lineage import LineageStore
from agent_memory.core.query_terms import keyword_terms, mentioned_names, unknown_share
from agent_memory.core.ranking import DECIMALS, Candidate, RankWeights, rank
from agent_memory.core.rules import check_tags, date_range
from agent_memory.core.visibility import can_read, readable_areas


@dataclass(frozen=True, slots=True)
class RetrievalRequest:
    query: str
    scopes: tuple[Scope, ...] = ()
    namespaces: tuple[str, ...] = ()
    layers: tuple[Layer, ...] = ()
    tags: tuple[str, ...] = ()
    session_id: str | None = None
    limit: int = 10
    mode: str = "hybrid"
    max_chars: int = 4000
    per_entry_max_chars: int = 800
    min_score: float = 0.0  # the relevance floor on `match` (0: off)
    relative_floor: float = 0.0  # items scoring under this share of the best score are left out (0: off)
    since: str | None = None  # ISO-8601: only memories dated (created_at) at or after this
    until: str | None = None  # ISO-8601: only memories dated before this (a bare date: to its end)
    include_superseded: bool = False
    budget_shares: Shares | None = None  # max_chars split by tier (core/budget.py); None: one budget, best first
    domains: tuple[Domain, ...] = ()  # only memories of these domains (empty: any, or none)


@dataclass(frozen=True, slots=True)
class RetrievedItem:
    entry: Entry
    text: str
    truncated: bool
    score: float
    parts: dict[str, float]
    supersedes: tuple[Replaced, ...] = ()  # the facts this one replaced that the caller may read


@dataclass(slots=True)
class RetrievalResult:
    items: list[RetrievedItem]
    context: str
    budget_chars: int
    dropped: int
    degraded: list[str]
    min_score: float = 0.0  # the floor applied
    relative_floor: float = 0.0  # the relative floor applied
    keyword_only: int = 0  # readable entries not yet searchable by meaning (searched by keyword only)
    withheld: int = 0  # candidates left out: all when the best was under the floor, else the weak ones
    stages_ms: dict[str, float] = field(default_factory=dict)

    @property
    def used_chars(self) -> int:
        return len(self.context)


@dataclass(slots=True)
class RetrievalMetrics:
    """Kept in process: how many retrievals, how many found something, what they injected, and
    the latency of each stage (sums, for means)."""

    retrievals: int = 0
    hits: int = 0
    injected_chars: int = 0
    stage_ms_total: dict[str, float] = field(default_factory=dict)

    def observe(self, result: RetrievalResult) -> None:
        self.retrievals += 1
        self.hits += 1 if result.items else 0
        self.injected_chars += result.used_chars
        for stage, ms in result.stages_ms.items():
            self.stage_ms_total[stage] = self.stage_ms_total.get(stage, 0.0) + ms

    @property
    def hit_rate(self) -> float:
        return self.hits / self.retrievals if self.retrievals else 0.0

    def snapshot(self) -> dict[str, object]:
        n = self.retrievals or 1
        return {
            "retrievals": self.retrievals,
            "hit_rate": round(self.hit_rate, 4),
            "mean_injected_chars": round(self.injected_chars / n, 1),
            "mean_stage_ms": {k: round(v / n, 3) for k, v in self.stage_ms_total.items()},
        }


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    candidate_depth: int = 100
    weights: RankWeights = RankWeights()
    inline_embed_max: int = 64  # entries not yet indexed, embedded during a call (the newest first)
    unknown_name_penalty: float = 0.1  # see `_above_floor`


class RetrievalService:
    def __init__(self, store: RetrievalStore, semantic: SemanticIndex | None, audit: AuditSink,
                 settings: RetrievalSettings, clock: Callable[[], datetime], lineage: LineageStore | None = None
                 ) -> None:
        self._store = store
        self._lineage = lineage  # None: items never say what they replaced
        self._semantic = semantic
        self._audit = audit
        self._settings = settings
        self._clock = clock
        self.metrics = RetrievalMetrics()

    async def retrieve(self, call: Call, request: RetrievalRequest) -> RetrievalResult:
        """Raises: InvalidParams (empty query, bad tags)."""
        if not request.query.strip():
            raise InvalidParams("query must not be empty: give the words or question to look up", field="query")
        stages: dict[str, float] = {}
        started = time.perf_counter()
        now = self._clock()
        since, until = date_range(request.since, request.until)
        filters = CandidateFilter(now=format_ts(now), layers=request.layers, tags=check_tags(request.tags),
                                  session_id=request.session_id, since=since, until=until,
                                  include_superseded=request.include_superseded, domains=request.domains)
        areas = readable_areas(call.caller, request.scopes)
        degraded: list[str] = []
        candidates: dict[str, Candidate] = {}
        keyword_only = 0
        use_keyword = request.mode in ("hybrid", "keyword")
        use_semantic = request.mode in ("hybrid", "semantic")
        depth = max(self._settings.candidate_depth, request.limit)
        terms = keyword_terms(request.query)
        use_keyword = use_keyword and bool(terms)

        async def keyword_search() -> list[tuple[Entry, int, float, float]]:
            mark = time.perf_counter()
            try:
                if not (partitions and terms and (use_keyword or request.mode == "semantic")):
                    return []
                return await self._store.keyword_candidates(terms, partitions, areas, filters, depth)
            finally:
                stages["keyword"] = _ms(mark)

        async def semantic_search() -> tuple[list[tuple[str, float]], list[float]] | None:
            mark = time.perf_counter()
            try:
                if not (partitions and use_semantic):
                    return None
                if self._semantic is None:
                    raise SemanticUnavailable("semantic search is switched off (vector_backend = none)")
                return await self._semantic.nearest(request.query, partitions, depth)
            except SemanticUnavailable as exc:
                degraded.append(str(exc))
                return None
            finally:
                stages["semantic"] = _ms(mark)

        async def keyword_then_vectors() -> tuple[list[tuple[Entry, int, float, float]], object | None]:
            # The keyword search is usually done before the query is embedded: what the fusion will
            # need to score its candidates by meaning is read meanwhile, off the critical path.
            hits = await keyword_search()
            if not (hits and use_semantic and self._semantic is not None):
                return hits, None
            try:
                return hits, await self._semantic.vectors_ahead([entry.id for entry, *_ in hits])
            except SemanticUnavailable:
                return hits, None

        ahead: object | None = None
        if request.mode == "keyword":  # one trip to the database: the partitions, then the search in them
            mark = time.perf_counter()
            partitions, keyword_hits = await self._store.readable_keyword_candidates(
                terms, areas, request.namespaces, filters, depth)
            stages["keyword"], stages["semantic"] = _ms(mark), 0.0
            semantic_hits = None
        else:
            # The entries still waiting for the vector index are read before the index is asked:
            # one applied meanwhile is then in the index for `nearest`, so none falls between.
            partitions, pending = await self._store.partitions_and_pending(
                areas, request.namespaces, filters, self._settings.inline_embed_max)
            if request.mode == "semantic":
                # Keywords only stand in when meaning cannot answer: searched then, not beside it
                # (on two cores the keyword search would slow the query's embedding down).
                keyword_hits, semantic_hits = [], await semantic_search()
                if semantic_hits is None:
                    keyword_hits = await keyword_search()
            else:
                # The two searches run side by side (SQLite and the vector index work on their own threads).
                (keyword_hits, ahead), semantic_hits = await asyncio.gather(keyword_then_vectors(), semantic_search())
        if request.mode == "semantic" and semantic_hits is None:
            use_keyword, use_semantic = bool(terms), False  # keyword-only fallback, said in `degraded`
            if not (partitions and keyword_hits) and degraded:
                # Nothing by keyword either: an empty success would read as "nothing stored".
                raise DomainError(f"mode semantic cannot answer now: {'; '.join(degraded)}; retry later or use "
                                  "mode hybrid or keyword", reason="semantic_unavailable")
        if use_keyword or not use_semantic:
            for entry, seq, score, coverage in keyword_hits:
                candidates[entry.id] = Candidate(entry=entry, seq=seq, keyword=score, coverage=coverage)
        if semantic_hits is not None:
            mark = time.perf_counter()
            nearest, vector = semantic_hits
            similarity = dict(nearest)
            missing = [i for i in similarity if i not in candidates]
            unscored = [i for i in candidates if i not in similarity]

            async def fill_similarity() -> dict[str, float]:
                try:
                    return await self._semantic.similarities(vector, partitions, unscored, ahead) if unscored else {}
                except SemanticUnavailable:
                    return {}

            async def fresh() -> tuple[list[tuple[Entry, int]], dict[str, float], int]:
                return await self._fresh(vector, pending)

            async def visible() -> tuple[list[tuple[Entry, int]], dict[int, tuple[float, float]]]:
                # Their keyword scores come in the same read (one trip to the database thread).
                return await self._store.visible_scored(missing, partitions, areas, filters,
                                                        terms if use_keyword else [])

            ((found, scores), extra), (waiting, recent, keyword_only) = await asyncio.gather(
                asyncio.gather(visible(), fill_similarity()), fresh())
            similarity.update(extra)
            similarity.update(recent)  # newer than what the index holds for them
            known = {entry.id for entry, _ in found} | set(candidates)
            late = [(entry, seq) for entry, seq in waiting if entry.id in recent and entry.id not in known]
            found = [*found, *late]
            if keyword_only:
                degraded.append(f"{keyword_only} memories written moments ago are not yet searchable by meaning "
                                "(searched by keyword only)")
            if late and use_keyword:
                scores = {**scores, **await self._store.keyword_scores(terms, [seq for _, seq in late])}
            for candidate in candidates.values():
                candidate.semantic = similarity.get(candidate.entry.id, 0.0)
            for entry, seq in found:
                score, coverage = scores.get(seq, (0.0, 0.0))
                candidates[entry.id] = Candidate(entry=entry, seq=seq, semantic=similarity[entry.id],
                                                 keyword=score, coverage=coverage)
            stages["fuse"] = _ms(mark)
        mark = time.perf_counter()
        # Defence in depth: whatever the stores returned, only entries the gate allows survive.
        allowed = [c for c in candidates.values() if can_read(call.caller, c.entry, areas)]
        ranked = rank(allowed, names=mentioned_names(request.query), weights=self._settings.weights,
                      now_epoch=now.timestamp(), use_keyword=use_keyword, use_semantic=use_semantic)
        stages["rank"] = _ms(mark)
        # The floors need meaning: min_score is off (reported 0) in mode keyword and in mode semantic
        # answered by keyword; the relative floor whenever semantic search did not answer.
        floor = request.min_score if use_semantic else 0.0
        relative = request.relative_floor if semantic_hits is not None else 0.0
        ranked, withheld = _above_floor(ranked, floor, unknown_share(request.query, allowed),
                                        self._settings.unknown_name_penalty)
        mark = time.perf_counter()
        kept, weak = _near_the_best(distinct(ranked, lambda c: c.entry.content, request.limit), relative)
        lines = [ContextLine(c.entry, *compress(c.entry, request.per_entry_max_chars)) for c in kept]
        context, used, dropped = (allocate(lines, request.max_chars, request.budget_shares) if request.budget_shares
                                  else assemble(lines, request.max_chars))
        by_id = {c.entry.id: c for c in kept}
        items = [RetrievedItem(entry=line.entry, text=line.text, truncated=line.truncated, score=round(
            by_id[line.entry.id].score, DECIMALS), parts=by_id[line.entry.id].parts) for line in used]
        stages["assemble"] = _ms(mark)
        stamp = format_ts(self._clock())
        if self._lineage is not None and items:
            replaced = await replaced_facts(self._lineage, call.caller, [i.entry.id for i in items], stamp)
            items = [replace(i, supersedes=replaced.get(i.entry.id, ())) for i in items]
        for item in items:
            await self._audit.record(audit_event(call, "memory_retrieval", item.entry.scope, item.entry.namespace,
                                                 item.entry.id, "ok", stamp))
        stages["total"] = _ms(started)
        if (trouble := self._audit.trouble()) is not None:
            degraded.append(trouble)
        result = RetrievalResult(items=items, context=context, budget_chars=request.max_chars, dropped=dropped,
                                 degraded=degraded, min_score=floor, relative_floor=relative, withheld=withheld + weak,
                                 keyword_only=keyword_only, stages_ms=stages)
        self.metrics.observe(result)
        return result

    async def _fresh(self, vector: list[float], pending: tuple[list[tuple[Entry, int]], int]
                     ) -> tuple[list[tuple[Entry, int]], dict[str, float], int]:
        """Read-your-writes by meaning: the entries that were waiting for the vector index when the
        call began, embedded now (the newest `inline_embed_max`); returns them, their cosine, and
        how many are left over."""
        waiting, total = pending
        if not waiting or self._semantic is None:
            return waiting, {}, total
        try:
            recent = await self._semantic.fresh_similarities(vector, [entry for entry, _ in waiting])
        except SemanticUnavailable:
            return waiting, {}, total
        return waiting, recent, total - len(recent)


def _above_floor(ranked: list[Candidate], floor: float, unknown: float, penalty: float
                 ) -> tuple[list[Candidate], int]:
    """The relevance floor: when not even the best candidate's `match` reaches `floor` (less
    `penalty` times the share of the names the query mentions that no candidate mentions), the
    store holds nothing about the query and nothing is returned, rather than the least bad noise."""
    if floor <= 0 or not ranked:
        return ranked, 0
    if max(c.matched for c in ranked) - penalty * unknown < floor:
        return [], len(ranked)
    return ranked, 0


def _near_the_best(kept: list[Candidate], relative: float) -> tuple[list[Candidate], int]:
    """The relative floor: the best-first `kept` whose score reaches `relative` times the best's
    (the ranking cut at one point), and how many fell short."""
    near = [c for c in kept if c.score >= relative * kept[0].score] if relative > 0 and kept else kept
    return near, len(kept) - len(near)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
