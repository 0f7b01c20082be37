"""memory_reflect `reflect`: distil a session's new turns into facts (layer `long_term`) and rules
(layer `meta`) in the caller's agent scope, source `reflection`.

Engines in order: facts/rules the caller supplies; a `Distiller` (MCP sampling: the client's
model) when the session offers one; the deterministic extractive engine. A watermark per session
(the storage position of the last turn distilled) makes reflecting twice process only new turns;
it moves by compare-and-set in the same transaction as the facts, so two reflections racing on
one session never store the same facts twice. A fact that repeats an earlier one reinforces it
(confidence up, `updated_at` now) instead of adding a copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from agent_memory.core.audit import audit_event
from agent_memory.core.clock import format_ts
from agent_memory.core.commands import Call
from agent_memory.core.context import near_duplicate
from agent_memory.core.errors import Conflict, DomainError, InvalidParams
from agent_memory.core.extract import Insight, Turn, extract
from agent_memory.core.ids import new_entry_id, new_etag, new_request_id
from agent_memory.core.models import Caller, Entry, Layer, Priority, Scope, Source, SystemType
from agent_memory.core.ports import SessionKey, SessionStore, SessionTransaction
from agent_memory.core.rules import Limits, check_content
from agent_memory.core.sessions import SessionService, check_session_id, session_key, turn_of

SUPPLIED_CONFIDENCE = 0.9
DUPLICATE_SIMILARITY = 0.8


class DistillFailed(Exception):
    """The distiller could not give usable facts (unreachable, refused, malformed output)."""


class Distiller(Protocol):
    async def distil(self, turns: list[Turn], max_items: int) -> list[Insight]:
        """Raises: DistillFailed."""
        ...


@dataclass(frozen=True, slots=True)
class Reflection:
    engine: str | None  # supplied | sampling | extractive; None when there was nothing to reflect
    entries: list[Entry]
    updated_ids: list[str]
    turns: int
    fallback_reason: str | None = None


def reinforce(old: float, new: float) -> float:
    """Confidence after a fact is stated again: independent evidence combined."""
    return round(1.0 - (1.0 - old) * (1.0 - new), 4)


class ReflectionService:
    def __init__(self, store: SessionStore, sessions: SessionService, limits: Limits,
                 clock: Callable[[], datetime], max_items: int = 20,
                 on_failure: Callable[[str, str], None] | None = None) -> None:
        self._store = store
        self._sessions = sessions
        self._limits = limits
        self._clock = clock
        self._max_items = max_items
        self._on_failure = on_failure

    async def reflect(self, call: Call, session_id: str, *, facts: list[str] | None = None,
                      rules: list[str] | None = None, distiller: Distiller | None = None,
                      max_items: int | None = None) -> Reflection:
        check_session_id(session_id)
        limit = self._max_items if max_items is None else max_items
        if not 1 <= limit <= 100:
            raise InvalidParams("max_items must be between 1 and 100", field="max_items")
        supplied = self._supplied(facts or [], rules or [], limit)
        namespace = await self._sessions.authorize(call)
        key = session_key(call, session_id)
        mark = await self._store.reflection_mark(key)
        new_turns = await self._store.session_turns(key, after=mark)
        turns = [turn_of(entry) for _, entry in new_turns]
        engine, fallback = "supplied", None
        if supplied:
            insights = supplied
        elif not turns:
            return Reflection(None, [], [], 0)
        else:
            engine, insights = "extractive", []
            if distiller is not None:
                try:
                    insights, engine = (await distiller.distil(turns, limit))[:limit], "sampling"
                except DistillFailed as exc:
                    fallback = str(exc)
            if engine == "extractive":
                insights = extract(turns, limit)
        new_mark = max([mark.position] + [position for position, _ in new_turns])
        existing = await self._store.reflections(call.caller.agent_id, call.caller.team)
        stored, updated = await self._store_insights(call, namespace, key, insights, existing,
                                                     mark.position, new_mark, engine)
        return Reflection(engine, stored, updated, len(turns), fallback)

    def _supplied(self, facts: list[str], rules: list[str], limit: int) -> list[Insight]:
        if len(facts) + len(rules) > limit:
            raise InvalidParams(f"at most {limit} facts plus rules (max_items)", field="facts", limit=limit)
        out = []
        for kind, texts in (("fact", facts), ("rule", rules)):
            for index, text in enumerate(texts):
                if not isinstance(text, str) or not text.strip():
                    raise InvalidParams(f"{kind}s[{index}] must be non-empty text", field=f"{kind}s", index=index)
                out.append(Insight(kind, check_content(text.strip(), self._limits), SUPPLIED_CONFIDENCE, "supplied"))
        return out

    async def _store_insights(self, call: Call, namespace: str, key: SessionKey, insights: list[Insight],
                              existing: list[Entry], mark: int, new_mark: int, engine: str
                              ) -> tuple[list[Entry], list[str]]:
        now = format_ts(self._clock())
        fresh: list[Entry] = []
        repeats: dict[str, float] = {}  # existing entry id -> confidence of the repeat
        for insight in insights:
            layer = Layer.LONG_TERM if insight.kind == "fact" else Layer.META
            match = next((e for e in existing + fresh
                          if e.layer is layer and near_duplicate(e.content, insight.content, DUPLICATE_SIMILARITY)),
                         None)
            if match is not None and match in fresh:
                continue  # said twice in this very batch
            if match is not None:
                repeats[match.id] = max(repeats.get(match.id, 0.0), insight.confidence)
                continue
            fresh.append(Entry(
                id=new_entry_id(), scope=Scope.AGENT, namespace=namespace, team=call.caller.team,
                owner_agent_id=call.caller.agent_id, content=insight.content,
                tags=("reflection", f"kind:{insight.category}"), priority=Priority.MEDIUM, source=Source.REFLECTION,
                confidence=insight.confidence, layer=layer, created_at=now, updated_at=now, expires_at=None,
                version=1, etag=new_etag(), session_id=key.session_id,
            ))

        def work(tx: SessionTransaction) -> tuple[list[Entry], list[str]]:
            if not tx.move_reflection_mark(key, mark, new_mark, now):
                raise Conflict("another reflection of this session ran at the same time; retry",
                               session_id=key.session_id)
            stored: list[Entry] = []
            updated: list[str] = []
            for entry in fresh:
                tx.insert(entry)
                stored.append(entry)
            for entry_id, confidence in repeats.items():
                current = tx.get(entry_id)
                if current is None:
                    continue  # deleted meanwhile: the fact is simply not reinforced
                again = replace(current, confidence=reinforce(current.confidence, confidence), updated_at=now,
                                version=current.version + 1, etag=new_etag())
                if tx.replace(again, expected_etag=current.etag):
                    stored.append(again)
                    updated.append(entry_id)
            for entry in stored:
                tx.enqueue_vector(entry, "upsert")
                tx.audit(audit_event(call, "reflect", Scope.AGENT, namespace, entry.id, "ok", now,
                                     session_id=key.session_id, engine=engine, updated=entry.id in updated))
            return stored, updated

        return await self._store.transact(work)

    async def reflect_pending(self, limit: int = 50) -> int:
        """The background job: reflect (extractive engine) every session with new turns, as the
        session's owner. Returns how many sessions it reflected."""
        done = 0
        for ref in await self._store.sessions_to_reflect(limit):
            caller = Caller(agent_id=ref.owner_agent_id, system_type=SystemType.SYS1, team=ref.team)
            call = Call(caller=caller, request_id=new_request_id(), tool="memory_reflect", action="reflect")
            try:
                result = await self.reflect(call, ref.session_id)
            except Conflict:
                continue  # another process reflected it first
            except DomainError as exc:  # one bad session (an imported oddity) must not stop the rest
                if self._on_failure is not None:
                    self._on_failure(ref.session_id, exc.code)
                continue
            done += result.engine is not None
        return done
