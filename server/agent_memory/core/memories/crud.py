"""The memory_crud service: every action checks the permission gate before storage."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from agent_memory.core.access import permissions
from agent_memory.core.access.entry_access import visible_entry
from agent_memory.core.access.read_lists import (
    check_key_slot,
    check_keyed,
    check_read_agents,
    list_change,
    require_list_setter,
)
from agent_memory.core.access.visibility import can_read, listing_area
from agent_memory.core.memories.changes import apply_change, redact_change
from agent_memory.core.memories.secrets import Redactor
from agent_memory.core.memories.writes import store_change, store_new
from agent_memory.core.model.audit import audit_event
from agent_memory.core.model.clock import format_ts
from agent_memory.core.model.commands import Call, EntryChange, NewEntry, Promotion, Removal
from agent_memory.core.model.confidence import confidence_of
from agent_memory.core.model.cursor import CursorCodec, Page, Position, query_binding
from agent_memory.core.model.domains import domain_of
from agent_memory.core.model.errors import Conflict, Forbidden, InvalidParams, NotFound
from agent_memory.core.model.ids import new_entry_id, new_etag
from agent_memory.core.model.models import Access, AuditEvent, Entry, ListFilters, Scope
from agent_memory.core.model.rules import (
    MAX_TAG_CHARS,
    Limits,
    check_content,
    check_key,
    check_tags,
    expiry,
    normalise_filters,
    required_layer,
    resolve_namespace,
)
from agent_memory.core.ports import AuditSink, EntryRepository, ListQuery, WriteTransaction

UPDATABLE_FIELDS = frozenset({"content", "tags", "priority", "confidence", "layer", "expires_at", "domain",
                              "read_agents"})
# A list's cursor binding takes the filters as a flat dict: the same values `dataclasses.asdict`
# gives (no field holds a dataclass), at a tenth of its cost (it deep-copies every value).
_FILTER_FIELDS = tuple(f.name for f in dataclasses.fields(ListFilters))


class CrudService:
    """Create, read, update, delete, list and promote memory entries for one caller at a time."""

    def __init__(
        self,
        repo: EntryRepository,
        audit: AuditSink,
        cursors: CursorCodec,
        limits: Limits,
        clock: Callable[[], datetime],
        redactor: Redactor,
    ) -> None:
        self._redactor = redactor  # secrets in content and tags never reach the store
        self._repo = repo
        self._audit = audit
        self._cursors = cursors
        self._limits = limits
        self._clock = clock

    # -- gate -------------------------------------------------------------------------------

    async def authorize(self, call: Call, access: Access, scope: Scope, namespace: str | None) -> str:
        """Resolve the request's namespace and check the gate for it, before any storage.

        Raises:
            InvalidParams: the namespace is missing or malformed.
            Forbidden: the gate denies the access (audited).
        """
        resolved = resolve_namespace(call.caller, scope, namespace)
        await self._require(call, access, scope, resolved)
        return resolved

    async def _require(self, call: Call, access: Access, scope: Scope, namespace: str) -> None:
        """The namespace-level gate; a denial is audited with the action the caller attempted."""
        try:
            permissions.require(call.caller, access, scope, namespace)
        except Forbidden:
            await self._audit.record(self._event(call, call.action or access.value, scope, namespace, None, "denied",
                                                 access=access.value))
            raise

    # -- actions ----------------------------------------------------------------------------

    async def create(self, call: Call, scope: Scope, namespace: str, item: NewEntry) -> Entry:
        """A new entry; with a key already held in this place, that entry updated instead (last write
        wins: version + 1, a new etag), in one statement the store's unique index on keys makes atomic."""
        await self._require(call, Access.WRITE, scope, namespace)
        now = self._clock()
        stamp = format_ts(now)
        entry = Entry(
            id=new_entry_id(), scope=scope, namespace=namespace, source=item.source,
            team=permissions.entry_team_for(call.caller, scope, namespace), owner_agent_id=call.caller.agent_id,
            content=check_content(item.content, self._limits), tags=check_tags(item.tags), priority=item.priority,
            confidence=confidence_of(item.source, item.confidence), layer=required_layer(scope, item.layer),
            created_at=stamp, updated_at=stamp, expires_at=expiry(now, item.expires_at, item.ttl_seconds),
            version=1, etag=new_etag(), key=check_key(item.key), domain=domain_of(item.domain, "domain"),
            read_agents=check_read_agents(item.read_agents),
        )
        entry, found = await self._redactor.aentry(entry, self._limits.max_content_chars, MAX_TAG_CHARS)

        def work(tx: WriteTransaction) -> Entry:
            if entry.key is None:
                store_new(tx, entry, self._event(call, "create", scope, namespace, entry.id, "ok"))
                return entry
            stored = tx.upsert_keyed(entry)
            if stored is None:
                raise Forbidden(f"key {entry.key!r} is held here by an entry another agent owns, which you may not "
                                "update", field="key")
            check_keyed(entry, stored)
            tx.enqueue_vector(stored, "upsert")
            details = {"key_updated": True, "version": stored.version} if stored.id != entry.id else {}
            tx.audit(self._event(call, "create", scope, namespace, stored.id, "ok", **details))
            return stored

        stored = await self._repo.transact(work)
        call.redactions.redacted += found
        return stored

    async def read(self, call: Call, scope: Scope, namespace: str, entry_id: str) -> Entry:
        await self._require(call, Access.READ, scope, namespace)
        found = (await self._repo.get_many([entry_id])).get(entry_id)
        entry = await self._visible_now(call, Access.READ, scope, namespace, entry_id, found)
        await self._audit.record(self._event(call, "read", scope, namespace, entry.id, "ok"))
        return entry

    async def read_by_id(self, call: Call, entry_id: str) -> Entry:
        """Read one entry by id alone (the MCP resource template): found only where the caller
        may read it; anything else is NOT_FOUND (never FORBIDDEN), audited as a denial."""
        absent = NotFound(f"no entry {entry_id}", id=entry_id)  # the same answer for every refusal
        found = (await self._repo.get_many([entry_id])).get(entry_id)
        if found is None:
            raise absent
        if not can_read(call.caller, found):
            await self._audit.record(self._event(call, "read", found.scope, found.namespace, entry_id, "denied",
                                                 access=Access.READ.value))
            raise absent
        try:
            return await self.read(call, found.scope, found.namespace, entry_id)
        except NotFound:  # expired or gone since the lookup
            raise absent from None

    async def update(self, call: Call, scope: Scope, namespace: str, change: EntryChange) -> Entry:
        await self._require(call, Access.WRITE, scope, namespace)
        unknown = set(change.changes) - UPDATABLE_FIELDS
        if unknown:
            raise InvalidParams(f"{sorted(unknown)[0]} cannot be updated; the updatable fields are "
                                f"{', '.join(sorted(UPDATABLE_FIELDS))}", field=sorted(unknown)[0],
                                allowed=sorted(UPDATABLE_FIELDS))
        now = self._clock()
        stamp = format_ts(now)
        denied: list[AuditEvent] = []
        change, found = await redact_change(change, self._redactor, self._limits)

        def work(tx: WriteTransaction) -> Entry | Conflict:
            current = visible_entry(call, Access.WRITE, scope, namespace, change.id, tx.get(change.id), stamp, denied)
            if current.conflict:
                raise Conflict(
                    "this is a conflict entry and cannot be updated: update the original "
                    f"({current.conflict_of}) with its current etag, then delete this entry",
                    current_etag=current.etag,
                    current_version=current.version,
                )
            if "read_agents" in change.changes:
                require_list_setter(call.caller, current, change.if_match)
            patched = apply_change(current, change, now, self._limits)
            if change.if_match is not None and change.if_match != current.etag:
                copy = replace(patched, id=new_entry_id(), owner_agent_id=call.caller.agent_id, created_at=stamp,
                               version=1, etag=new_etag(), conflict=True, conflict_of=current.id, key=None)
                store_new(tx, copy, self._event(call, "update", scope, namespace, current.id, "conflict",
                                                conflict_id=copy.id))
                return Conflict(
                    f"if_match does not match the current etag of {current.id}; your change was kept "
                    f"as conflict entry {copy.id}",
                    current_etag=current.etag,
                    current_version=current.version,
                    conflict_id=copy.id,
                )
            check_key_slot(call.caller, current, patched, tx.key_holder)
            event = self._event(call, "update", scope, namespace, current.id, "ok", version=patched.version,
                                **list_change(current, patched))
            if not store_change(tx, current, patched, event):
                raise Conflict("entry changed concurrently; read it and retry",
                               current_etag=current.etag, current_version=current.version)
            return patched

        try:
            outcome = await self._repo.transact(work)
        finally:
            await self._record_all(denied)
        call.redactions.redacted += found  # stored, as the entry or as a conflict entry
        if isinstance(outcome, Conflict):
            raise outcome
        return outcome

    async def delete(self, call: Call, scope: Scope, namespace: str, removal: Removal) -> Entry:
        await self._require(call, Access.WRITE, scope, namespace)
        stamp = format_ts(self._clock())
        denied: list[AuditEvent] = []

        def work(tx: WriteTransaction) -> Entry:
            current = visible_entry(call, Access.WRITE, scope, namespace, removal.id, tx.get(removal.id), stamp, denied)
            if removal.if_match is not None and removal.if_match != current.etag:
                raise Conflict(
                    f"if_match does not match the current etag of {current.id}; nothing was deleted",
                    current_etag=current.etag,
                    current_version=current.version,
                )
            if not tx.delete(current.id, expected_etag=current.etag):
                raise Conflict("entry changed concurrently; read it and retry",
                               current_etag=current.etag, current_version=current.version)
            tx.enqueue_vector(current, "delete")
            tx.audit(self._event(call, "delete", scope, namespace, current.id, "ok"))
            return current

        try:
            return await self._repo.transact(work)
        finally:
            await self._record_all(denied)

    async def promote(self, call: Call, scope: Scope, namespace: str, item: Promotion) -> Entry:
        await self._require(call, Access.READ, scope, namespace)
        target_ns = resolve_namespace(call.caller, item.target_scope, item.target_namespace, "target_namespace")
        await self._require(call, Access.WRITE, item.target_scope, target_ns)
        found = (await self._repo.get_many([item.id])).get(item.id)
        source = await self._visible_now(call, Access.READ, scope, namespace, item.id, found)
        if source.conflict:
            raise InvalidParams("a conflict entry cannot be promoted; reconcile it first", field="id")
        if source.superseded_by is not None:
            raise InvalidParams(f"this fact was changed by {source.superseded_by}; promote that one instead",
                                field="id", superseded_by=source.superseded_by)
        if item.target_scope is scope and target_ns == namespace:
            raise InvalidParams("target is the entry's own scope and namespace", field="target_namespace")
        now = format_ts(self._clock())
        copy = replace(source, id=new_entry_id(), scope=item.target_scope, namespace=target_ns,
                       team=permissions.entry_team_for(call.caller, item.target_scope, target_ns),
                       owner_agent_id=call.caller.agent_id, layer=item.layer or source.layer, created_at=now,
                       updated_at=now, version=1, etag=new_etag(), promoted_from=source.id, key=None)
        event = self._event(call, "promote", item.target_scope, target_ns, copy.id, "ok",
                            promoted_from=source.id, from_scope=scope.value, from_namespace=namespace)

        await self._repo.transact(lambda tx: store_new(tx, copy, event))
        return copy

    async def list(
        self, call: Call, scope: Scope, namespace: str, filters: ListFilters, cursor: str | None, limit: int,
        *, subtree: bool = False,
    ) -> Page:
        """One page of the entries at (scope, namespace), with `subtree` also those under it.

        The gate is checked on `namespace`; everything under it is readable alike (agent scope:
        the caller's own entries in its team; team scope: the team in the first segment; global:
        sys4), so a subtree never reaches memory the caller may not read.
        """
        await self._require(call, Access.READ, scope, namespace)
        filters = normalise_filters(filters)
        binding = query_binding(call.caller.agent_id, call.caller.team, scope.value, namespace,
                                {name: getattr(filters, name) for name in _FILTER_FIELDS}, subtree)
        after = self._cursors.decode(cursor, binding) if cursor else None
        query = ListQuery(area=listing_area(call.caller, scope, namespace, subtree=subtree), filters=filters,
                          now=format_ts(self._clock()))
        rows = await self._repo.list_page(query, after, limit + 1)
        page, more = rows[:limit], len(rows) > limit
        next_cursor = (
            self._cursors.encode(Position(page[-1].created_at, page[-1].id), binding) if more else None
        )
        await self._audit.record(self._event(call, "list", scope, namespace, None, "ok",
                                             entry_ids=[e.id for e in page], **({"subtree": True} if subtree else {})))
        return Page(items=page, next_cursor=next_cursor)

    # -- helpers ----------------------------------------------------------------------------

    async def _visible_now(
        self, call: Call, access: Access, scope: Scope, namespace: str, entry_id: str, entry: Entry | None
    ) -> Entry:
        denied: list[AuditEvent] = []
        try:
            return visible_entry(call, access, scope, namespace, entry_id, entry, format_ts(self._clock()), denied)
        finally:
            await self._record_all(denied)

    async def _record_all(self, events: list[AuditEvent]) -> None:
        for event in events:
            await self._audit.record(event)

    def _event(
        self, call: Call, action: str, scope: Scope, namespace: str | None, entry_id: str | None,
        outcome: str, **details: object,
    ) -> AuditEvent:
        return audit_event(call, action, scope, namespace, entry_id, outcome, format_ts(self._clock()), **details)
