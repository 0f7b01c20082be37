"""memory_retrieve over what the caller may read only, in named stages: plan (defaults, checks) ->
candidates (keyword and semantic search, fused) -> rank -> floors -> budget (dedupe, compress,
fit) -> render (what each item replaced, audit)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from agent_memory.core.access.visibility import can_read
from agent_memory.core.memories.lineage import replaced_facts
from agent_memory.core.model.audit import audit_event
from agent_memory.core.model.clock import format_ts
from agent_memory.core.model.commands import Call
from agent_memory.core.model.models import Entry, Layer
from agent_memory.core.model.statements import COMPACTION_TAG
from agent_memory.core.ports import AuditSink, RetrievalStore, SemanticIndex
from agent_memory.core.ports.lineage import LineageStore
from agent_memory.core.recall.budget import allocate
from agent_memory.core.recall.context import ContextLine, assemble, compress, distinct
from agent_memory.core.recall.query_terms import mentioned_names, unknown_share
from agent_memory.core.recall.ranking import DECIMALS, Candidate, RankWeights, rank
from agent_memory.core.recall.retrieval_candidates import CandidateSearch, Gathered
from agent_memory.core.recall.retrieval_plan import Plan, RetrievalDefaults, RetrievalRequest, plan
from agent_memory.core.recall.retrieval_result import RetrievalMetrics, RetrievalResult, RetrievedItem

__all__ = ["RetrievalDefaults", "RetrievalMetrics", "RetrievalRequest", "RetrievalResult", "RetrievalService",
           "RetrievalSettings", "RetrievedItem"]


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    candidate_depth: int = 100
    weights: RankWeights = RankWeights()
    inline_embed_max: int = 64  # entries not yet indexed, embedded during a call (the newest first)
    unknown_name_penalty: float = 0.1  # see `_above_floor`
    defaults: RetrievalDefaults = RetrievalDefaults()  # what a request leaves out


@dataclass(frozen=True, slots=True)
class Floors:
    """The floors applied (reported back) and what they left."""

    min_score: float
    relative_floor: float
    kept: list[Candidate]  # best first, at most `limit`, no near-duplicates
    withheld: int


@dataclass(frozen=True, slots=True)
class Fitted:
    items: list[RetrievedItem]
    context: str
    dropped: int


class RetrievalService:
    def __init__(self, store: RetrievalStore, semantic: SemanticIndex | None, audit: AuditSink,
                 settings: RetrievalSettings, clock: Callable[[], datetime], lineage: LineageStore | None = None
                 ) -> None:
        self._search = CandidateSearch(store, semantic, settings.inline_embed_max)
        self._lineage = lineage  # None: items never say what they replaced
        self._audit = audit
        self._settings = settings
        self._clock = clock
        self.metrics = RetrievalMetrics()

    async def retrieve(self, call: Call, request: RetrievalRequest) -> RetrievalResult:
        """Raises: InvalidParams (empty query, bad tags or dates), DomainError (mode semantic
        cannot answer)."""
        started = time.perf_counter()
        stages: dict[str, float] = {}
        planned = plan(call, request, self._settings.defaults, self._settings.candidate_depth, self._clock())
        found = await self._search.gather(planned, stages)
        mark = time.perf_counter()
        ranked = self._rank(call, planned, found)
        stages["rank"] = _ms(mark)
        mark = time.perf_counter()
        floors = self._floors(planned, found, ranked)
        fitted = _fit(planned, floors.kept)
        stages["assemble"] = _ms(mark)
        mark = time.perf_counter()
        items = await self._render(call, fitted.items)
        stages["render"] = _ms(mark)
        stages["total"] = _ms(started)
        degraded = found.degraded
        if (trouble := self._audit.trouble()) is not None:
            degraded.append(trouble)
        result = RetrievalResult(items=items, context=fitted.context, budget_chars=planned.budget_chars,
                                 dropped=fitted.dropped, degraded=degraded, min_score=floors.min_score,
                                 relative_floor=floors.relative_floor, withheld=floors.withheld,
                                 keyword_only=found.keyword_only, stages_ms=stages)
        self.metrics.observe(result)
        return result

    def _rank(self, call: Call, planned: Plan, found: Gathered) -> list[Candidate]:
        # Defence in depth: whatever the stores returned, only entries the gate allows survive.
        allowed = [c for c in found.candidates.values() if can_read(call.caller, c.entry, planned.areas)
                   and not _own_turn(c.entry, planned.leave_out_session)]
        return rank(allowed, names=mentioned_names(planned.query), weights=self._settings.weights,
                    now_epoch=planned.now.timestamp(), use_keyword=found.use_keyword,
                    use_semantic=found.use_semantic)

    def _floors(self, planned: Plan, found: Gathered, ranked: list[Candidate]) -> Floors:
        """The floors need meaning: min_score is off (reported 0) in mode keyword and in mode
        semantic answered by keyword; the relative floor whenever semantic search did not answer."""
        floor = planned.min_score if found.use_semantic else 0.0
        relative = planned.relative_floor if found.by_meaning else 0.0
        ranked, withheld = _above_floor(ranked, floor, unknown_share(planned.query, ranked),
                                        self._settings.unknown_name_penalty)
        kept, weak = _near_the_best(distinct(ranked, lambda c: c.entry.content, planned.limit), relative,
                                    planned.filters.include_superseded)
        return Floors(floor, relative, kept, withheld + weak)

    async def _render(self, call: Call, items: list[RetrievedItem]) -> list[RetrievedItem]:
        """What each item replaced (that the caller may read), and one audit event per item."""
        stamp = format_ts(self._clock())
        if self._lineage is not None and items:
            replaced = await replaced_facts(self._lineage, call.caller, [i.entry.id for i in items], stamp)
            items = [replace(i, supersedes=replaced.get(i.entry.id, ())) for i in items]
        for item in items:
            await self._audit.record(audit_event(call, "memory_retrieval", item.entry.scope, item.entry.namespace,
                                                 item.entry.id, "ok", stamp))
        return items


def _own_turn(entry: Entry, session_id: str | None) -> bool:
    """A turn logged in `session_id` (its compaction summaries are not turns)."""
    return (session_id is not None and entry.session_id == session_id and entry.layer is Layer.SESSION
            and COMPACTION_TAG not in entry.tags)


def _fit(planned: Plan, kept: list[Candidate]) -> Fitted:
    """Each kept candidate compressed to its line, the lines fitted into the budget (split by tier
    when shares are set), best first."""
    lines = [ContextLine(c.entry, *compress(c.entry, planned.per_entry_max_chars)) for c in kept]
    context, used, dropped = (allocate(lines, planned.budget_chars, planned.shares) if planned.shares
                              else assemble(lines, planned.budget_chars))
    by_id = {c.entry.id: c for c in kept}
    items = [RetrievedItem(entry=line.entry, text=line.text, truncated=line.truncated,
                           score=round(by_id[line.entry.id].score, DECIMALS), parts=by_id[line.entry.id].parts)
             for line in used]
    return Fitted(items, context, dropped)


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


def _near_the_best(kept: list[Candidate], relative: float, chains: bool) -> tuple[list[Candidate], int]:
    """The relative floor: the best-first `kept` whose score reaches `relative` times the best's
    (the ranking cut at one point), and how many fell short. With `chains` (the caller asked for
    superseded facts) a fact is never cut from a chain it shares with one kept: the older facts a
    kept one replaced, and the newer ones that replaced a kept one, stay beside it."""
    if relative <= 0 or not kept:
        return kept, 0
    bar = relative * kept[0].score
    near = {c.entry.id for c in kept if c.score >= bar}
    if chains:
        near |= _chained(kept, near)
    return [c for c in kept if c.entry.id in near], len(kept) - len(near)


def _chained(candidates: list[Candidate], kept: set[str]) -> set[str]:
    """The ids of `candidates` linked to a kept one through `superseded_by`, at any distance."""
    links = [(c.entry.id, c.entry.superseded_by) for c in candidates if c.entry.superseded_by]
    found, grown = set(kept), True
    while grown:
        grown = False
        for older, newer in links:
            if (older in found) != (newer in found):
                found |= {older, newer}
                grown = True
    return (found - kept) & {c.entry.id for c in candidates}


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
