"""memory_retrieve's candidates: the keyword and the semantic search (side by side), and their
fusion into one candidate per entry, scored by both where both are in use."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from agent_memory.core.model.errors import DomainError
from agent_memory.core.model.models import Entry
from agent_memory.core.ports import Partition, RetrievalStore, SemanticIndex, SemanticUnavailable
from agent_memory.core.recall.ranking import Candidate
from agent_memory.core.recall.retrieval_plan import Plan

KeywordHits = list[tuple[Entry, int, float, float]]  # entry, sequence number, BM25, coverage
SemanticHits = tuple[list[tuple[str, float]], list[float]]  # (id, cosine) best first, the query's vector
SWITCHED_OFF = "semantic search is switched off (vector_backend = none)"
Pending = tuple[list[tuple[Entry, int]], int]  # entries the vector index has not reached (newest first), how many


@dataclass(slots=True)
class Gathered:
    """The candidates, and which signals rank them."""

    candidates: dict[str, Candidate] = field(default_factory=dict)
    use_keyword: bool = False  # keyword scores count
    use_semantic: bool = False  # similarities count
    by_meaning: bool = False  # the semantic search answered
    keyword_only: int = 0  # readable entries not yet searchable by meaning
    degraded: list[str] = field(default_factory=list)


class CandidateSearch:
    def __init__(self, store: RetrievalStore, semantic: SemanticIndex | None, inline_embed_max: int) -> None:
        self._store = store
        self._semantic = semantic
        self._inline_embed_max = inline_embed_max

    async def gather(self, plan: Plan, stages: dict[str, float]) -> Gathered:
        """Raises: DomainError (semantic_unavailable: mode semantic, no meaning and no keyword hit)."""
        out = Gathered(use_keyword=plan.keyword, use_semantic=plan.semantic)
        if plan.mode == "keyword" or self._semantic is None:
            await self._by_keyword_only(plan, out, stages)
            return out
        # The entries still waiting for the vector index are read before the index is asked: one
        # applied meanwhile is then in the index for `nearest`, so none falls between.
        mark = time.perf_counter()
        partitions, pending = await self._store.partitions_and_pending(
            plan.areas, plan.namespaces, plan.filters, self._inline_embed_max)
        stages["partitions"] = _ms(mark)
        ahead: object | None = None
        if plan.mode == "semantic":
            # Keywords only stand in when meaning cannot answer: searched then, not beside it (on
            # two cores the keyword search would slow the query's embedding down).
            hits, nearest = [], await self._nearest(plan, partitions, out, stages)
            if nearest is None:
                hits = await self._keyword(plan, partitions, stages)
                out.use_keyword, out.use_semantic = bool(plan.terms), False  # said in `degraded`
                if not (partitions and hits) and out.degraded:
                    # Nothing by keyword either: an empty success would read as "nothing stored".
                    raise DomainError(f"mode semantic cannot answer now: {'; '.join(out.degraded)}; retry later "
                                      "or use mode hybrid or keyword", reason="semantic_unavailable")
        else:
            # Side by side (SQLite and the vector index work on their own threads).
            (hits, ahead), nearest = await asyncio.gather(self._keyword_and_vectors(plan, partitions, stages),
                                                          self._nearest(plan, partitions, out, stages))
        if out.use_keyword or not out.use_semantic:
            _add_keyword(out, hits)
        if nearest is not None:
            mark = time.perf_counter()
            await self._fuse(plan, partitions, pending, nearest, ahead, out)
            stages["fuse"] = _ms(mark)
        return out

    async def _by_keyword_only(self, plan: Plan, out: Gathered, stages: dict[str, float]) -> None:
        """Mode keyword, and any mode without a vector index: one trip to the database (the
        partitions, then the keyword search in them). Nothing is read for the fusion: without an
        index no search by meaning answers, and its outbox, never drained, holds every entry (the
        newest `inline_embed_max` of them, read and discarded on each call, cost 35 ms at 1,000)."""
        mark = time.perf_counter()
        partitions, hits = await self._store.readable_keyword_candidates(plan.terms, plan.areas, plan.namespaces,
                                                                         plan.filters, plan.depth)
        stages["keyword"], stages["semantic"] = _ms(mark), 0.0
        if plan.mode != "keyword" and partitions:
            out.degraded.append(SWITCHED_OFF)
            if plan.mode == "semantic":  # answered by keyword, as when the index cannot answer
                out.use_keyword, out.use_semantic = bool(plan.terms), False
                if not hits:
                    raise DomainError(f"mode semantic cannot answer: {SWITCHED_OFF} and no keyword matches; use "
                                      "mode hybrid or keyword", reason="semantic_unavailable")
        _add_keyword(out, hits)

    async def _keyword(self, plan: Plan, partitions: list[Partition], stages: dict[str, float]) -> KeywordHits:
        mark = time.perf_counter()
        try:
            if not (partitions and plan.terms):
                return []
            return await self._store.keyword_candidates(plan.terms, partitions, plan.areas, plan.filters, plan.depth)
        finally:
            stages["keyword"] = _ms(mark)

    async def _keyword_and_vectors(self, plan: Plan, partitions: list[Partition], stages: dict[str, float]
                                   ) -> tuple[KeywordHits, object | None]:
        """The keyword hits, and their stored vectors: the keyword search is usually done before
        the query is embedded, so what the fusion needs to score them by meaning is read meanwhile."""
        hits = await self._keyword(plan, partitions, stages)
        if not (hits and self._semantic is not None):
            return hits, None
        try:
            return hits, await self._semantic.vectors_ahead([entry.id for entry, *_ in hits])
        except SemanticUnavailable:
            return hits, None

    async def _nearest(self, plan: Plan, partitions: list[Partition], out: Gathered, stages: dict[str, float]
                       ) -> SemanticHits | None:
        mark = time.perf_counter()
        try:
            if not partitions:
                return None
            if self._semantic is None:
                raise SemanticUnavailable(SWITCHED_OFF)
            found = await self._semantic.nearest(plan.query, partitions, plan.depth)
            out.by_meaning = True
            return found
        except SemanticUnavailable as exc:
            out.degraded.append(str(exc))
            return None
        finally:
            stages["semantic"] = _ms(mark)

    async def _fuse(self, plan: Plan, partitions: list[Partition], pending: Pending, hits: SemanticHits,
                    ahead: object | None, out: Gathered) -> None:
        """Every candidate scored by meaning (the keyword hits' similarities filled in) and, where
        keywords count, by keyword (the semantic hits' BM25 read with their rows); the semantic
        hits the caller may not read are dropped here."""
        nearest, vector = hits
        candidates = out.candidates
        similarity = dict(nearest)
        missing = [i for i in similarity if i not in candidates]
        unscored = [i for i in candidates if i not in similarity]
        terms = plan.terms if out.use_keyword else []
        ((found, scores), extra), (waiting, recent, out.keyword_only) = await asyncio.gather(
            asyncio.gather(self._store.visible_scored(missing, partitions, plan.areas, plan.filters, terms),
                           self._similarities(vector, partitions, unscored, ahead)),
            self._fresh(vector, pending))
        similarity.update(extra)
        similarity.update(recent)  # newer than what the index holds for them
        # Found by meaning: the `depth` nearest of the indexed and the in-line embedded together,
        # as the index will answer once it holds them all (the others would skew the ranking).
        nearest_ids = _nearest_ids(nearest, recent, plan.depth)
        known = {entry.id for entry, _ in found} | set(candidates)
        late = [(entry, seq) for entry, seq in waiting if entry.id in nearest_ids and entry.id not in known]
        found = [(entry, seq) for entry, seq in found if entry.id in nearest_ids] + late
        if out.keyword_only:
            out.degraded.append(f"{out.keyword_only} memories written moments ago are not yet searchable by "
                                "meaning (searched by keyword only)")
        if late and out.use_keyword:
            scores = {**scores, **await self._store.keyword_scores(plan.terms, [seq for _, seq in late])}
        for candidate in candidates.values():
            candidate.semantic = similarity.get(candidate.entry.id, 0.0)
        for entry, seq in found:
            score, coverage = scores.get(seq, (0.0, 0.0))
            candidates[entry.id] = Candidate(entry=entry, seq=seq, semantic=similarity[entry.id], keyword=score,
                                             coverage=coverage)

    async def _similarities(self, vector: list[float], partitions: list[Partition], entry_ids: list[str],
                            ahead: object | None) -> dict[str, float]:
        if not entry_ids or self._semantic is None:
            return {}
        try:
            return await self._semantic.similarities(vector, partitions, entry_ids, ahead)
        except SemanticUnavailable:
            return {}

    async def _fresh(self, vector: list[float], pending: Pending) -> tuple[list[tuple[Entry, int]], dict[str, float],
                                                                           int]:
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


def _add_keyword(out: Gathered, hits: KeywordHits) -> None:
    for entry, seq, score, coverage in hits:
        out.candidates[entry.id] = Candidate(entry=entry, seq=seq, keyword=score, coverage=coverage)


def _nearest_ids(nearest: list[tuple[str, float]], recent: dict[str, float], depth: int) -> set[str]:
    """The `depth` best by cosine of the index's nearest and the entries embedded in-line."""
    merged = {**dict(nearest), **recent}
    if len(merged) <= depth:
        return set(merged)
    return set(sorted(merged, key=lambda i: merged[i], reverse=True)[:depth])


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
