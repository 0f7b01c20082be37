"""Nothing said in a session is silently forgotten: before its turns leave (their layer's
retention, an expiry, a namespace over its limit), a session is kept.

Keeping a session, as its owner: reflection distils whatever turns it has not distilled yet
(facts, decisions, preferences, rules), then the turns not kept before go into the session's
digest (`digest`: every sentence that says something, word for word), stored in the session's
namespace as long-term memory (layer `long_term`, domain `session_summary`, source `reflection`,
tags `session-digest` and `turns:<first>-<last>`). The kept mark moves past those turns in the
same transaction, by compare-and-set, so two keepers racing on one session write one digest.

The pruner deletes a session turn only once the kept mark covers it (`Victim.held`); a session
that cannot be kept (its reflection or its digest failed) keeps its turns, and the failure is
reported (`on_failure`), never silent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from agent_memory.core.model.audit import audit_event
from agent_memory.core.model.clock import format_ts
from agent_memory.core.model.commands import Call
from agent_memory.core.model.confidence import SUMMARY
from agent_memory.core.model.errors import Conflict, DomainError
from agent_memory.core.model.ids import new_entry_id, new_etag, new_request_id
from agent_memory.core.model.models import Caller, Domain, Entry, Layer, Priority, Scope, Source, SystemType
from agent_memory.core.ports import SessionRef, SessionStore, SessionTransaction
from agent_memory.core.sessions.digest import digest
from agent_memory.core.sessions.reflection import ReflectionService
from agent_memory.core.sessions.turns import session_key, turn_of

DIGEST_TAG = "session-digest"


@dataclass(frozen=True, slots=True)
class KeepLimits:
    digest_max_chars: int = 700  # one digest entry at most
    chunk_turns: int = 6  # turns per digest entry at most (a time gap also starts a new one)
    chunk_gap_seconds: float = 3600.0


class SessionKeeper:
    def __init__(self, store: SessionStore, reflection: ReflectionService, limits: KeepLimits,
                 clock: Callable[[], datetime], *, on_failure: Callable[[str, str], None] | None = None) -> None:
        self._store = store
        self._reflection = reflection
        self._limits = limits
        self._clock = clock
        self._on_failure = on_failure

    async def keep(self, refs: Iterable[SessionRef]) -> int:
        """Keep each session; returns how many are kept now."""
        kept = 0
        for ref in dict.fromkeys(refs):
            try:
                await self.keep_one(ref)
                kept += 1
            except Conflict:
                continue  # another keeper moved the mark first: its digest holds these turns
            except DomainError as exc:  # the session keeps its turns; the next pass tries again
                self._failed(ref, exc.code)
            except Exception as exc:  # a store failure: the same, and the other sessions still go on
                self._failed(ref, type(exc).__name__)
        return kept

    async def keep_one(self, ref: SessionRef) -> list[Entry]:
        """Distil, then digest, the session's turns not kept yet; returns the digest entries written.

        Raises:
            Conflict: another keeper kept the session meanwhile.
            DomainError: reflection refused the session."""
        caller = Caller(agent_id=ref.owner_agent_id, system_type=SystemType.SYS1, team=ref.team)
        call = Call(caller=caller, request_id=new_request_id(), tool="keeper", action="keep")
        try:
            await self._reflection.reflect(call, ref.session_id, namespace=ref.namespace)
        except Conflict:
            pass  # a reflection ran at the same time: those turns are distilled either way
        key = session_key(call, ref.session_id, ref.namespace)
        mark = await self._store.kept_mark(key)
        start = await self._store.digested_through(key)
        turns = [(position, entry) for position, entry in await self._store.session_turns(key) if position > mark]
        fresh = [(start + n, position, entry) for n, (position, entry) in enumerate(turns, 1)]
        if not fresh:
            return []
        now = format_ts(self._clock())
        parts = digest([(n, turn_of(entry)) for n, _, entry in fresh], self._limits.digest_max_chars,
                       self._limits.chunk_turns, self._limits.chunk_gap_seconds)
        dated = {n: entry.created_at for n, _, entry in fresh}
        entries = [Entry(
            id=new_entry_id(), scope=Scope.AGENT, namespace=ref.namespace, team=ref.team,
            owner_agent_id=ref.owner_agent_id, content=text, tags=(DIGEST_TAG, f"turns:{ordinals[0]}-{ordinals[-1]}"),
            priority=Priority.MEDIUM, source=Source.REFLECTION, confidence=SUMMARY, layer=Layer.LONG_TERM,
            # Dated like the last turn it holds, so lists and recency place it where those turns were.
            created_at=dated[ordinals[-1]], updated_at=now, expires_at=None, version=1, etag=new_etag(),
            session_id=ref.session_id, domain=Domain.SESSION_SUMMARY,
        ) for ordinals, text in parts]
        newest = max(position for _, position, _ in fresh)

        def work(tx: SessionTransaction) -> list[Entry]:
            if not tx.move_kept_mark(key, mark, newest):
                raise Conflict("another keeper kept this session at the same time", session_id=ref.session_id)
            for entry in entries:
                tx.insert(entry)
                tx.enqueue_vector(entry, "upsert")
            tx.audit(audit_event(call, "keep", Scope.AGENT, ref.namespace, entries[-1].id if entries else None,
                                 "ok", now, session_id=ref.session_id, turns=len(fresh), digests=len(entries)))
            return entries

        return await self._store.transact(work)

    def _failed(self, ref: SessionRef, reason: str) -> None:
        if self._on_failure is not None:
            self._on_failure(ref.session_id, reason)
