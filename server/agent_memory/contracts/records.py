"""An entry's wire form, both ways: `wire_record` (the shape of `MemoryRecord`, and of an exported
line, built without revalidating it) and `entry_from_record` (a validated record back to an entry)."""

from __future__ import annotations

from typing import Any

from agent_memory.contracts.crud import MemoryRecord
from agent_memory.core.access.read_lists import check_read_agents
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.models import Domain, Entry, Layer, Priority, Scope, Source
from agent_memory.core.model.rules import (
    Limits,
    check_confidence,
    check_content,
    check_key,
    check_tags,
    normalise_timestamp,
)
from agent_memory.core.sessions.turns import check_session_id


def wire_record(entry: Entry) -> dict[str, Any]:
    """The wire form of an entry (the shape of `MemoryRecord`, built without revalidating it).
    Enum values are read as `_value_` (the member's own attribute, as `.value` returns it without
    the property's descriptor call: a list page reads 125 of them)."""
    domain = entry.domain
    return {
        "id": entry.id, "scope": entry.scope._value_, "namespace": entry.namespace, "team": entry.team,
        "owner_agent_id": entry.owner_agent_id, "content": entry.content, "tags": list(entry.tags),
        "priority": entry.priority._value_, "source": entry.source._value_, "confidence": entry.confidence,
        "layer": entry.layer._value_, "created_at": entry.created_at, "updated_at": entry.updated_at,
        "expires_at": entry.expires_at, "version": entry.version, "etag": entry.etag,
        "conflict": entry.conflict, "conflict_of": entry.conflict_of, "session_id": entry.session_id,
        "promoted_from": entry.promoted_from, "compacted": entry.compacted,
        "superseded_by": entry.superseded_by, "key": entry.key, "domain": domain._value_ if domain else None,
        "read_agents": list(entry.read_agents),
    }


def entry_from_record(r: MemoryRecord, limits: Limits) -> Entry:
    """The entry a record (an exported line, a client's record) describes, checked as a write is.

    Raises: InvalidParams naming what cannot be stored."""
    if r.session_id is not None:
        check_session_id(r.session_id)
    if not r.etag:
        raise InvalidParams("etag must not be empty")
    stamps = {name: normalise_timestamp(value, name) if value else None
              for name, value in (("created_at", r.created_at), ("updated_at", r.updated_at),
                                  ("expires_at", r.expires_at))}
    if stamps["created_at"] is None or stamps["updated_at"] is None:
        raise InvalidParams("created_at and updated_at are required")
    return Entry(
        id=r.id, scope=Scope(r.scope), namespace=r.namespace, team=r.team, owner_agent_id=r.owner_agent_id,
        content=check_content(r.content, limits), tags=check_tags(tuple(r.tags)), priority=Priority(r.priority),
        source=Source(r.source), confidence=check_confidence(r.confidence), layer=Layer(r.layer),
        created_at=stamps["created_at"], updated_at=stamps["updated_at"], expires_at=stamps["expires_at"],
        version=r.version, etag=r.etag, conflict=r.conflict, conflict_of=r.conflict_of, session_id=r.session_id,
        promoted_from=r.promoted_from, compacted=r.compacted, superseded_by=r.superseded_by,
        key=check_key(r.key), domain=Domain(r.domain) if r.domain else None,
        read_agents=check_read_agents(r.read_agents),
    )
