"""memory_reflect `log` and `compact`: session turns in, older turns folded into summaries.

Turns live in the caller's own agent namespace, layer `session`, with `session_id` set and tags
`role:<role>` (and `name:<name>`). Compaction keeps the most recent turns intact, cuts the older
ones into chunks (at a time gap, at most `chunk_turns` turns each) and writes one summary entry per
chunk (source `reflection`, tags `compaction` and `turns:<first>-<last>`, the 1-based positions of
its turns in the session), then marks those turns compacted: they stay listable but leave
retrieval (and the vector index), and pruning removes them first. Positions continue from the
session's earlier compactions. Each summary keeps the details of its turns (see `summary`), so a
question about an old detail still reaches them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from agent_memory.core.access import permissions
from agent_memory.core.memories.secrets import Redactor
from agent_memory.core.memories.writes import store_new
from agent_memory.core.model.audit import audit_event
from agent_memory.core.model.clock import format_ts
from agent_memory.core.model.commands import Call
from agent_memory.core.model.confidence import SUMMARY, default_confidence
from agent_memory.core.model.errors import Forbidden, InvalidParams, NotImplementedByBackend
from agent_memory.core.model.ids import new_entry_id, new_etag
from agent_memory.core.model.models import Access, Domain, Entry, Layer, Priority, Scope, Source
from agent_memory.core.model.rules import check_namespace, normalise_timestamp
from agent_memory.core.model.statements import COMPACTION_TAG, Turn
from agent_memory.core.ports import AuditSink, SessionKey, SessionStore, SessionTransaction
from agent_memory.core.sessions.extract import ROLES
from agent_memory.core.sessions.summary import Rarity, chunk, summarise

MAX_TURNS_PER_CALL = 100
SESSION_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}\Z")
NAME = re.compile(r"^[\w .@-]{1,64}\Z", re.UNICODE)


@dataclass(frozen=True, slots=True)
class SessionLimits:
    logging: bool = True
    turn_max_chars: int = 4000
    compaction_threshold_chars: int = 20_000
    keep_recent: int = 10
    summary_max_chars: int = 800  # the cap of one summary (each is as long as the average turn it covers)
    chunk_turns: int = 2
    chunk_gap_seconds: float = 3600.0  # a pause longer than this starts a new chunk (0: never)


@dataclass(frozen=True, slots=True)
class Compaction:
    summaries: list[Entry] = field(default_factory=list)  # in session order
    compacted_ids: list[str] = field(default_factory=list)

    @property
    def summary(self) -> Entry | None:
        """The last summary written (the one `summary_id` names), if any."""
        return self.summaries[-1] if self.summaries else None


@dataclass(frozen=True, slots=True)
class Logged:
    entries: list[Entry]
    truncated: list[int]  # indexes of turns cut to the length limit
    compaction: Compaction | None


def check_session_id(session_id: str) -> str:
    if not isinstance(session_id, str) or not SESSION_ID.match(session_id):
        raise InvalidParams("session_id must be 1-128 characters of [A-Za-z0-9._:-]", field="session_id")
    return session_id


def session_key(call: Call, session_id: str, namespace: str | None = None) -> SessionKey:
    home = namespace or call.caller.home
    home = "" if home == call.caller.agent_id else home
    return SessionKey(agent_id=call.caller.agent_id, team=call.caller.team, session_id=session_id, namespace=home)


def turn_of(entry: Entry) -> Turn:
    role = next((t[5:] for t in entry.tags if t.startswith("role:")), "user")
    name = next((t[5:] for t in entry.tags if t.startswith("name:")), None)
    return Turn(role=role, content=entry.content, name=name, at=entry.created_at)


class SessionService:
    def __init__(self, store: SessionStore, audit: AuditSink, limits: SessionLimits,
                 clock: Callable[[], datetime], redactor: Redactor) -> None:
        self._redactor = redactor  # secrets in turns never reach the store
        self._store = store
        self._audit = audit
        self._limits = limits
        self._clock = clock

    async def authorize(self, call: Call, namespace: str | None = None) -> str:
        """Sessions live in the caller's own agent memory: its id, or `namespace` under it (a
        project's `<agent_id>/<project>`); returns the namespace.

        Raises:
            InvalidParams: a malformed namespace.
            Forbidden: a namespace that is not the caller's own (audited)."""
        namespace = call.caller.home if namespace is None else check_namespace(namespace)
        try:
            permissions.require(call.caller, Access.WRITE, Scope.AGENT, namespace)
        except Forbidden:
            await self._audit.record(audit_event(call, call.action or "write", Scope.AGENT, namespace, None,
                                                 "denied", format_ts(self._clock())))
            raise
        return namespace

    async def log(self, call: Call, session_id: str, turns: list[Turn], namespace: str | None = None,
                  domain: Domain | None = None) -> Logged:
        if not self._limits.logging:
            raise NotImplementedByBackend("session logging is switched off (session_logging = false); the "
                                          "operator turns it on with MEMORY_SESSION_LOGGING=1",
                                          setting="session_logging")
        check_session_id(session_id)
        if not turns:
            raise InvalidParams("turns must hold at least one turn", field="turns")
        if len(turns) > MAX_TURNS_PER_CALL:
            raise InvalidParams(f"at most {MAX_TURNS_PER_CALL} turns per call; got {len(turns)}: split them over "
                                "several log calls",
                                field="turns", limit=MAX_TURNS_PER_CALL)
        namespace = await self.authorize(call, namespace)
        now = format_ts(self._clock())
        for index, turn in enumerate(turns):
            _check_turn(turn, index)
        # Redacted before the cut, which could hide half a secret; a large log off the event loop.
        contents = await self._redactor.aeach([turn.content for turn in turns])
        entries, truncated, redacted = [], [], 0
        for index, (turn, (content, found)) in enumerate(zip(turns, contents, strict=True)):
            entry, cut, found = self._turn_entry(call, namespace, session_id, turn, content, found, index, now,
                                                 domain)
            entries.append(entry)
            redacted += found
            if cut:
                truncated.append(index)
        events = [audit_event(call, "log", Scope.AGENT, namespace, e.id, "ok", now, session_id=session_id)
                  for e in entries]

        def work(tx: SessionTransaction) -> None:
            for entry, event in zip(entries, events, strict=True):
                store_new(tx, entry, event)

        await self._store.transact(work)
        call.redactions.redacted += redacted
        compaction = None
        threshold = self._limits.compaction_threshold_chars
        if threshold and await self._store.uncompacted_chars(session_key(call, session_id, namespace)) > threshold:
            compaction = await self.compact(call, session_id, namespace=namespace)
        return Logged(entries, truncated, compaction)

    def _turn_entry(self, call: Call, namespace: str, session_id: str, turn: Turn, content: str, found: int,
                    index: int, now: str, domain: Domain | None = None) -> tuple[Entry, bool, int]:
        """The entry of a checked turn whose content is already redacted (`found` secrets)."""
        at = normalise_timestamp(turn.at, f"turns[{index}].at") if turn.at else now
        cut = len(content) > self._limits.turn_max_chars
        if cut:
            content = content[: self._limits.turn_max_chars - 1] + "…"
        tags, in_tags = self._redactor.texts((f"role:{turn.role}",) + ((f"name:{turn.name}",) if turn.name else ()))
        source = Source.TOOL if turn.role == "tool" else Source.MANUAL
        entry = Entry(
            id=new_entry_id(), scope=Scope.AGENT, namespace=namespace, team=call.caller.team,
            owner_agent_id=call.caller.agent_id, content=content, tags=tags, priority=Priority.MEDIUM,
            source=source, confidence=default_confidence(source), layer=Layer.SESSION,
            created_at=at, updated_at=now, expires_at=None, version=1, etag=new_etag(), session_id=session_id,
            domain=domain,
        )
        return entry, cut, found + in_tags

    async def compact(self, call: Call, session_id: str, keep_recent: int | None = None,
                      namespace: str | None = None) -> Compaction:
        check_session_id(session_id)
        namespace = await self.authorize(call, namespace)
        keep = self._limits.keep_recent if keep_recent is None else keep_recent
        if keep < 0:
            raise InvalidParams("keep_recent must be 0 or more", field="keep_recent")
        key = session_key(call, session_id, namespace)
        # Positions in the session continue after the turns earlier compactions covered; read
        # again if another compaction committed meanwhile, so the turns and their positions agree.
        for _ in range(3):
            start = await self._store.compacted_through(key)
            pending = await self._store.session_turns(key, compacted=False)
            if await self._store.compacted_through(key) == start:
                break
        older = pending[: max(0, len(pending) - keep)]
        if not older:
            return Compaction()
        numbered = [(start + n, turn_of(entry), entry) for n, (_, entry) in enumerate(older, 1)]
        now = format_ts(self._clock())
        rarity = Rarity([turn for _, turn, _ in numbered])

        def summaries(turns: list[tuple[int, Turn, Entry]]) -> list[Entry]:
            return [self._summary(call, namespace, session_id, part, rarity, now) for part in
                    chunk(turns, self._limits.chunk_turns, self._limits.chunk_gap_seconds)]

        planned = summaries(numbered)
        ids = [entry.id for _, _, entry in numbered]

        def work(tx: SessionTransaction) -> tuple[list[Entry], list[str]]:
            # Only turns still uncompacted (another process may have compacted some meanwhile).
            current = [i for i in ids if (e := tx.get(i)) is not None and not e.compacted]
            if not current:
                return [], []
            written = planned
            if len(current) < len(ids):
                kept = set(current)
                written = summaries([item for item in numbered if item[2].id in kept])
            for summary in written:
                tx.insert(summary)
                tx.enqueue_vector(summary, "upsert")
            tx.mark_compacted(current)
            folded = set(current)
            for _, _, entry in numbered:
                if entry.id in folded:
                    tx.enqueue_vector(entry, "delete")  # out of the vector index too
            tx.audit(audit_event(call, "compact", Scope.AGENT, namespace, written[-1].id, "ok", now,
                                 session_id=session_id, compacted=len(current), summaries=len(written)))
            return written, current

        written, done = await self._store.transact(work)
        return Compaction(written, done)

    def _summary(self, call: Call, namespace: str, session_id: str, part: list[tuple[int, Turn, Entry]],
                 rarity: Rarity, now: str) -> Entry:
        ordinals = [n for n, _, _ in part]
        content = summarise(ordinals, [turn for _, turn, _ in part], self._limits.summary_max_chars, rarity)
        return Entry(
            id=new_entry_id(), scope=Scope.AGENT, namespace=namespace, team=call.caller.team,
            owner_agent_id=call.caller.agent_id, content=content,
            tags=(COMPACTION_TAG, f"turns:{ordinals[0]}-{ordinals[-1]}"), priority=Priority.MEDIUM,
            source=Source.REFLECTION, confidence=SUMMARY, layer=Layer.SESSION,
            # Dated like the last turn it covers, so lists and recency place it where those turns were.
            created_at=part[-1][2].created_at, updated_at=now, expires_at=None, version=1, etag=new_etag(),
            session_id=session_id, domain=Domain.SESSION_SUMMARY,
        )


def _check_turn(turn: Turn, index: int) -> None:
    """A turn's role, content, name and time, checked before anything is redacted or stored.

    Raises:
        InvalidParams: an unknown role, empty content, a malformed name or time.
    """
    if turn.role not in ROLES:
        raise InvalidParams(f"turns[{index}].role must be one of {', '.join(ROLES)}", field="role", index=index)
    if not turn.content or not turn.content.strip():
        raise InvalidParams(f"turns[{index}].content must not be empty", field="content", index=index)
    if turn.name is not None and not NAME.match(turn.name):
        raise InvalidParams(f"turns[{index}].name must be 1-64 letters, digits, spaces or ._@-",
                            field="name", index=index)
    if turn.at:
        normalise_timestamp(turn.at, f"turns[{index}].at")
