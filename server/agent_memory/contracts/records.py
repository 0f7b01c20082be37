"""The wire form of an entry: the shape of `MemoryRecord` (and of an exported line), built without
revalidating it."""

from __future__ import annotations

from typing import Any

from agent_memory.core.models import Entry


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
