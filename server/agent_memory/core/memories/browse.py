"""Browsing memory across every area a caller may read (the memory console's list): the same gate
as `memory_crud list`, widened from one namespace to the caller's readable areas, optionally
narrowed to a namespace and everything under it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from datetime import datetime

from agent_memory.core.access.visibility import Area, readable_areas
from agent_memory.core.model.areas import in_namespace
from agent_memory.core.model.audit import audit_event
from agent_memory.core.model.clock import format_ts
from agent_memory.core.model.commands import Call
from agent_memory.core.model.cursor import CursorCodec, Page, Position, query_binding
from agent_memory.core.model.models import ListFilters, Scope
from agent_memory.core.model.rules import normalise_filters
from agent_memory.core.ports import AuditSink, BrowseQuery, BrowseStore


def narrowed(areas: Sequence[Area], namespace: str | None) -> tuple[Area, ...]:
    """`areas` cut down to `namespace` and everything under it. An area rooted above the namespace
    becomes the namespace's subtree; one rooted at or below it stays; any other disappears."""
    if namespace is None:
        return tuple(areas)
    out = []
    for area in areas:
        if area.namespace is None or in_namespace(namespace, area.namespace, subtree=area.subtree):
            out.append(dataclasses.replace(area, namespace=namespace, subtree=True))
        elif in_namespace(area.namespace, namespace, subtree=True):
            out.append(area)
    return tuple(out)


class BrowseService:
    def __init__(self, store: BrowseStore, audit: AuditSink, cursors: CursorCodec,
                 clock: Callable[[], datetime]) -> None:
        self._store = store
        self._audit = audit
        self._cursors = cursors
        self._clock = clock

    async def browse(self, call: Call, *, scopes: tuple[Scope, ...] = (), namespace: str | None = None,
                     filters: ListFilters | None = None, superseded: bool | None = None,
                     cursor: str | None = None, limit: int = 25) -> Page:
        """A page of what `call.caller` may read, newest first; audited like a list (entry ids).

        Raises:
            InvalidParams: a malformed filter or a cursor of another query.
        """
        filters = normalise_filters(filters or ListFilters())
        binding = query_binding(call.caller.agent_id, call.caller.team, ",".join(s.value for s in scopes),
                                namespace or "", {**dataclasses.asdict(filters), "superseded": superseded,
                                                  "browse": True})
        after = self._cursors.decode(cursor, binding) if cursor else None
        areas = narrowed(readable_areas(call.caller, scopes), namespace)
        now = format_ts(self._clock())
        rows = await self._store.browse_page(BrowseQuery(areas, filters, superseded, now), after, limit + 1)
        page, more = rows[:limit], len(rows) > limit
        next_cursor = self._cursors.encode(Position(page[-1].created_at, page[-1].id), binding) if more else None
        await self._audit.record(audit_event(call, "list", scopes[0] if len(scopes) == 1 else None, namespace, None,
                                             "ok", now, entry_ids=[e.id for e in page], browse=True))
        return Page(items=page, next_cursor=next_cursor)
