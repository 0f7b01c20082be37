"""Supersede chains: what a fact replaced, and undoing a supersede.

Consolidation (`core/sessions/reflection.py`) marks an older fact `superseded_by` a newer one; the older fact
leaves retrieval but is never deleted. This module answers the other direction (which facts a fact
replaced, for `memory_retrieve` items and the console's history) and undoes a supersede: the older
fact becomes current again (`superseded_by` cleared, version + 1, a new etag), the newer one stays
as a separate current fact, and the change is audited as `unsupersede` with both ids.

Who may undo: whoever may write the older fact (the permission gate, `core/access/permissions.py`): in agent
scope its owner in its team, and an operator token (the memory console); in team scope (an imported
chain) sys3-sys5 of that team. An entry the caller may not write is NOT_FOUND, as for a missing one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from agent_memory.core.access import permissions
from agent_memory.core.access.entry_access import visible_entry
from agent_memory.core.access.visibility import can_read
from agent_memory.core.model.audit import audit_event
from agent_memory.core.model.clock import format_ts
from agent_memory.core.model.commands import Call
from agent_memory.core.model.errors import Conflict, Forbidden, InvalidParams
from agent_memory.core.model.ids import new_etag
from agent_memory.core.model.models import Access, AuditEvent, Caller, Entry, Scope
from agent_memory.core.ports import AuditSink, EntryRepository, WriteTransaction
from agent_memory.core.ports.lineage import LineageStore


@dataclass(frozen=True, slots=True)
class Replaced:
    """A fact a later fact replaced: its id and its own date (`created_at`)."""

    id: str
    created_at: str

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "created_at": self.created_at}


@dataclass(frozen=True, slots=True)
class Restoration:
    """Undo a supersede of the fact `id` (optionally only if its etag is still `if_match`)."""

    id: str
    if_match: str | None = None


async def replaced_facts(store: LineageStore, caller: Caller, entry_ids: Sequence[str], now: str
                         ) -> dict[str, tuple[Replaced, ...]]:
    """For each of `entry_ids`, the facts it replaced that `caller` may read and that have not
    expired, oldest first; ids that replaced nothing (readable) are left out."""
    if not entry_ids:
        return {}
    found: dict[str, list[Replaced]] = {}
    for old in await store.superseded_facts(list(dict.fromkeys(entry_ids))):
        if old.superseded_by is None or not can_read(caller, old):
            continue
        if old.expires_at is not None and old.expires_at <= now:
            continue
        found.setdefault(old.superseded_by, []).append(Replaced(old.id, old.created_at))
    return {entry_id: tuple(olds) for entry_id, olds in found.items()}


class LineageService:
    """The supersede chain of entries, and undoing a supersede, for one caller at a time."""

    def __init__(self, repo: EntryRepository, store: LineageStore, audit: AuditSink,
                 clock: Callable[[], datetime]) -> None:
        self._repo = repo
        self._store = store
        self._audit = audit
        self._clock = clock

    async def replaced(self, caller: Caller, entry_ids: Sequence[str]) -> dict[str, tuple[Replaced, ...]]:
        return await replaced_facts(self._store, caller, entry_ids, format_ts(self._clock()))

    async def unsupersede(self, call: Call, scope: Scope, namespace: str, item: Restoration) -> Entry:
        """Make the superseded fact `item.id` current again.

        Raises:
            Forbidden: the caller may not write at (scope, namespace) (audited).
            NotFound: no such entry there, or one the caller may not write (audited as a denial).
            InvalidParams: the entry is current (nothing superseded it).
            Conflict: `item.if_match` is not its etag, or it changed meanwhile.
        """
        try:
            permissions.require(call.caller, Access.WRITE, scope, namespace)
        except Forbidden:
            await self._audit.record(audit_event(call, "unsupersede", scope, namespace, None, "denied",
                                                 format_ts(self._clock()), access=Access.WRITE.value))
            raise
        stamp = format_ts(self._clock())
        denied: list[AuditEvent] = []
        restorer = replace(call, action="unsupersede")

        def work(tx: WriteTransaction) -> Entry:
            current = visible_entry(restorer, Access.WRITE, scope, namespace, item.id, tx.get(item.id), stamp,
                                    denied)
            if current.superseded_by is None:
                raise InvalidParams(f"{current.id} is a current fact: no later fact superseded it, so there is "
                                    "nothing to undo", field="id", id=current.id)
            if item.if_match is not None and item.if_match != current.etag:
                raise Conflict(f"if_match does not match the current etag of {current.id}; nothing was restored",
                               current_etag=current.etag, current_version=current.version)
            restored = replace(current, superseded_by=None, updated_at=stamp, version=current.version + 1,
                               etag=new_etag())
            if not tx.replace(restored, expected_etag=current.etag):
                raise Conflict("entry changed concurrently; read it and retry",
                               current_etag=current.etag, current_version=current.version)
            tx.audit(audit_event(restorer, "unsupersede", scope, namespace, current.id, "ok", stamp,
                                 superseded_by=current.superseded_by, version=restored.version))
            return restored

        try:
            return await self._repo.transact(work)
        finally:
            for event in denied:
                await self._audit.record(event)
