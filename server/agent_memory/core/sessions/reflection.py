"""memory_reflect `reflect`: distil a session's new turns into facts (layer `long_term`) and rules
(layer `meta`) in the caller's agent scope, source `reflection`.

Engines in order: facts/rules the caller supplies; the caller's `Distiller` (MCP sampling: the
client's model) when the session offers one; the server's own `Distiller` (a local model) when one
is configured; the deterministic extractive engine. A distiller that fails hands over to the next,
and the result says why (`fallback_reason`). A watermark per session (the storage position of the
last turn distilled) makes reflecting twice process only new turns; it moves by compare-and-set in
the same transaction as the facts, so two reflections racing on one session never store the same
facts twice.

Consolidation (`consolidation.judge`): each new statement is cleaned of reminders and pleas to
remember, then compared with the agent's current facts and rules by meaning (the embedder's
cosine; by word overlap while the model is not loaded here, and the result says so). Only
statements about the same subject are ever merged (`subjects`: server alpha is not server bravo,
the user's partner is not the user). A restatement reinforces the existing entry (confidence up,
`confidence.reinforce`; `updated_at`, version and etag new) instead of adding a copy; a change of mind about the same
subject is stored and supersedes the old entry, which is kept (listable, readable, audited) with
`superseded_by` set and leaves retrieval. Nothing is ever deleted here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from agent_memory.core.memories.secrets import Redactor
from agent_memory.core.model.audit import audit_event
from agent_memory.core.model.clock import format_ts
from agent_memory.core.model.commands import Call
from agent_memory.core.model.confidence import SUPPLIED, reinforce
from agent_memory.core.model.domains import insight_domain
from agent_memory.core.model.errors import Conflict, DomainError, InvalidParams
from agent_memory.core.model.ids import new_entry_id, new_etag, new_request_id
from agent_memory.core.model.models import Caller, Entry, Layer, Priority, Scope, Source, SystemType
from agent_memory.core.model.rules import Limits, check_content
from agent_memory.core.model.statements import Insight, Turn
from agent_memory.core.ports import (
    Distiller,
    DistillFailed,
    Meaning,
    MeaningUnavailable,
    SessionKey,
    SessionStore,
    SessionTransaction,
)
from agent_memory.core.recall.context import near_duplicate
from agent_memory.core.sessions.consolidation import Candidate, judge, lexical_similarity
from agent_memory.core.sessions.extract import extract
from agent_memory.core.sessions.fillers import clean_statement
from agent_memory.core.sessions.turns import SessionService, check_session_id, session_key, turn_of

DUPLICATE_SIMILARITY = 0.8
LEXICAL = "duplicates and changes were matched by wording only: {reason}"


@dataclass(frozen=True, slots=True)
class Reflection:
    engine: str | None  # supplied | sampling | model | extractive; None when there was nothing to reflect
    entries: list[Entry]
    updated_ids: list[str]
    turns: int
    fallback_reason: str | None = None
    superseded_ids: list[str] = field(default_factory=list)
    consolidation: str | None = None  # meaning | lexical; None when there was nothing to compare with
    degraded: str | None = None  # why consolidation fell back to wording


@dataclass(slots=True)
class Planned:
    insight: Insight
    layer: Layer
    supersedes: str | None = None  # an existing entry's id
    after: Planned | None = None  # or an earlier statement of this same batch
    reason: str | None = None

    @property
    def content(self) -> str:
        return self.insight.content


@dataclass(slots=True)
class Plan:
    method: str | None
    degraded: str | None
    fresh: list[Planned] = field(default_factory=list)
    repeats: dict[str, float] = field(default_factory=dict)  # existing entry id -> confidence of the repeat

    def add(self, insight: Insight, layer: Layer, supersedes: str | None = None, reason: str | None = None) -> None:
        earlier = next((p for p in self.fresh if supersedes is not None and p.supersedes == supersedes), None)
        if earlier is not None:  # changed twice in one batch: the latest statement supersedes the earlier one
            self.fresh.append(Planned(insight, layer, None, earlier, reason))
        else:
            self.fresh.append(Planned(insight, layer, supersedes, None, reason))


class ReflectionService:
    def __init__(self, store: SessionStore, sessions: SessionService, limits: Limits,
                 clock: Callable[[], datetime], *, max_items: int = 20,
                 on_failure: Callable[[str, str], None] | None = None, meaning: Meaning | None = None,
                 redactor: Redactor, model: Distiller | None = None) -> None:
        """`model`: the server's own distiller (a local model), tried after the caller's."""
        self._model = model
        self._redactor = redactor  # secrets in facts and rules (supplied or distilled) never reach the store
        self._meaning = meaning
        self._store = store
        self._sessions = sessions
        self._limits = limits
        self._clock = clock
        self._max_items = max_items
        self._on_failure = on_failure

    async def reflect(self, call: Call, session_id: str, *, facts: list[str] | None = None,
                      rules: list[str] | None = None, distiller: Distiller | None = None,
                      max_items: int | None = None, namespace: str | None = None) -> Reflection:
        check_session_id(session_id)
        limit = self._max_items if max_items is None else max_items
        if not 1 <= limit <= 100:
            raise InvalidParams("max_items must be between 1 and 100", field="max_items")
        supplied = self._supplied(facts or [], rules or [], limit)
        namespace = await self._sessions.authorize(call, namespace)
        key = session_key(call, session_id, namespace)
        mark = await self._store.reflection_mark(key)
        new_turns = await self._store.session_turns(key, after=mark)
        turns = [turn_of(entry) for _, entry in new_turns]
        existing = await self._store.reflections(call.caller.agent_id, call.caller.team, key.namespace)
        engine, fallback = "supplied", None
        if supplied:
            insights = supplied
        elif not turns:
            return Reflection(None, [], [], 0)
        else:
            engine, insights, fallback = await self._distil(turns, limit, existing, distiller)
        insights, redacted = await self._redact([replace(i, content=clean_statement(i.content)) for i in insights])
        new_mark = max([mark.position] + [position for position, _ in new_turns])
        plan = await self._consolidate(insights, existing)
        stored, updated, superseded = await self._store_insights(call, namespace, key, plan, mark.position,
                                                                 new_mark, engine)
        call.redactions.redacted += redacted
        return Reflection(engine, stored, updated, len(turns), fallback, superseded, plan.method, plan.degraded)

    async def _distil(self, turns: list[Turn], limit: int, existing: list[Entry], distiller: Distiller | None
                      ) -> tuple[str, list[Insight], str | None]:
        """(engine, insights, why the engines tried before it failed): the caller's distiller, then
        the server's own, then the extractive engine, whichever answers first."""
        reasons: list[str] = []
        for engine, candidate in (("sampling", distiller), ("model", self._model)):
            if candidate is None:
                continue
            try:
                return engine, (await candidate.distil(turns, limit, existing))[:limit], "; ".join(reasons) or None
            except DistillFailed as exc:
                reasons.append(str(exc))
        return "extractive", extract(turns, limit), "; ".join(reasons) or None

    async def _consolidate(self, insights: list[Insight], existing: list[Entry]) -> Plan:
        """Decide, for each insight, whether it repeats, changes or adds to what the agent holds."""
        cosines: list[dict[str, float]] | None = None
        degraded = None
        if insights and existing:
            if self._meaning is None:
                degraded = LEXICAL.format(reason="no embedding model in this server")
            else:
                try:
                    cosines = await self._meaning.cosines([i.content for i in insights], existing)
                except MeaningUnavailable as exc:
                    degraded = LEXICAL.format(reason=str(exc))
        plan = Plan("meaning" if cosines is not None else "lexical" if degraded else None, degraded)
        by_id = {e.id: e for e in existing}
        for index, insight in enumerate(insights):
            layer = Layer.LONG_TERM if insight.kind == "fact" else Layer.META
            if any(p.layer is layer and near_duplicate(p.content, insight.content, DUPLICATE_SIMILARITY)
                   for p in plan.fresh):
                continue  # said twice in this very batch
            named = by_id.get(insight.replaces) if insight.replaces else None
            if named is not None and named.layer is layer:
                plan.add(insight, layer, supersedes=named.id, reason="named by the distiller")
                continue
            candidates = [Candidate(e.id, e.content, cosines[index].get(e.id, 0.0) if cosines is not None
                                    else lexical_similarity(e.content, insight.content))
                          for e in existing if e.layer is layer]
            verdict = judge(insight.content, candidates, by_meaning=cosines is not None)
            if verdict.relation == "same" and verdict.entry_id is not None:
                plan.repeats[verdict.entry_id] = max(plan.repeats.get(verdict.entry_id, 0.0), insight.confidence)
            elif verdict.relation == "changes" and verdict.entry_id is not None:
                plan.add(insight, layer, supersedes=verdict.entry_id, reason=verdict.reason)
            else:
                plan.add(insight, layer)
        return plan

    async def _redact(self, insights: list[Insight]) -> tuple[list[Insight], int]:
        done = await self._redactor.aeach([i.content for i in insights], self._limits.max_content_chars)
        return ([replace(i, content=text) for i, (text, _) in zip(insights, done, strict=True)],
                sum(found for _, found in done))

    def _supplied(self, facts: list[str], rules: list[str], limit: int) -> list[Insight]:
        if len(facts) + len(rules) > limit:
            raise InvalidParams(f"at most {limit} facts plus rules (max_items)", field="facts", limit=limit)
        out = []
        for kind, texts in (("fact", facts), ("rule", rules)):
            for index, text in enumerate(texts):
                if not isinstance(text, str) or not text.strip():
                    raise InvalidParams(f"{kind}s[{index}] must be non-empty text", field=f"{kind}s", index=index)
                out.append(Insight(kind, check_content(text.strip(), self._limits), SUPPLIED, "supplied"))
        return out

    async def _store_insights(self, call: Call, namespace: str, key: SessionKey, plan: Plan, mark: int,
                              new_mark: int, engine: str) -> tuple[list[Entry], list[str], list[str]]:
        now = format_ts(self._clock())
        fresh: dict[int, Entry] = {}
        for planned in plan.fresh:
            insight = planned.insight
            fresh[id(planned)] = Entry(
                id=new_entry_id(), scope=Scope.AGENT, namespace=namespace, team=call.caller.team,
                owner_agent_id=call.caller.agent_id, content=insight.content,
                tags=("reflection", f"kind:{insight.category}"), priority=Priority.MEDIUM, source=Source.REFLECTION,
                confidence=insight.confidence, layer=planned.layer, created_at=now, updated_at=now, expires_at=None,
                version=1, etag=new_etag(), session_id=key.session_id, domain=insight_domain(insight),
            )

        def work(tx: SessionTransaction) -> tuple[list[Entry], list[str], list[str]]:
            if not tx.move_reflection_mark(key, mark, new_mark, now):
                raise Conflict("another reflection of this session ran at the same time; retry",
                               session_id=key.session_id)
            stored: list[Entry] = []
            updated: list[str] = []
            superseded: list[str] = []
            for planned in plan.fresh:
                entry = fresh[id(planned)]
                tx.insert(entry)
                stored.append(entry)
                target = fresh[id(planned.after)].id if planned.after is not None else planned.supersedes
                old = tx.get(target) if target else None
                if old is None or old.superseded_by is not None:
                    continue  # deleted or changed meanwhile: nothing left to supersede
                marked = replace(old, superseded_by=entry.id, updated_at=now, version=old.version + 1,
                                 etag=new_etag())
                if tx.replace(marked, expected_etag=old.etag):
                    superseded.append(old.id)
                    tx.audit(audit_event(call, "supersede", Scope.AGENT, namespace, old.id, "ok", now,
                                         session_id=key.session_id, superseded_by=entry.id, reason=planned.reason,
                                         confidence=old.confidence, superseded_by_confidence=entry.confidence))
            before: dict[str, float] = {}  # reinforced entry id -> its confidence before
            for entry_id, confidence in plan.repeats.items():
                current = tx.get(entry_id)
                if current is None or current.superseded_by is not None:
                    continue  # deleted or changed meanwhile: the fact is simply not reinforced
                again = replace(current, confidence=reinforce(current.confidence, confidence), updated_at=now,
                                version=current.version + 1, etag=new_etag())
                if tx.replace(again, expected_etag=current.etag):
                    stored.append(again)
                    updated.append(entry_id)
                    before[entry_id] = current.confidence
            for entry in stored:
                tx.enqueue_vector(entry, "upsert")
                tx.audit(audit_event(call, "reflect", Scope.AGENT, namespace, entry.id, "ok", now,
                                     session_id=key.session_id, engine=engine, updated=entry.id in updated,
                                     consolidation=plan.method, confidence=entry.confidence,
                                     **({"previous_confidence": before[entry.id]} if entry.id in before else {})))
            return stored, updated, superseded

        return await self._store.transact(work)

    async def reflect_pending(self, limit: int = 50) -> int:
        """The background job: reflect every session with new turns (with the server's own model
        when one is configured, else the extractive engine), as the session's owner. Returns how
        many sessions it reflected."""
        done = 0
        for ref in await self._store.sessions_to_reflect(limit):
            caller = Caller(agent_id=ref.owner_agent_id, system_type=SystemType.SYS1, team=ref.team)
            call = Call(caller=caller, request_id=new_request_id(), tool="memory_reflect", action="reflect")
            try:
                result = await self.reflect(call, ref.session_id, namespace=ref.namespace)
            except Conflict:
                continue  # another process reflected it first
            except DomainError as exc:  # one bad session (an imported oddity) must not stop the rest
                if self._on_failure is not None:
                    self._on_failure(ref.session_id, exc.code)
                continue
            done += result.engine is not None
        return done
