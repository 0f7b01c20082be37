"""Mapping between `Entry` and its PostgreSQL row (psycopg `%s` placeholders)."""

from __future__ import annotations

from typing import Any

from agent_memory.core.models import Entry, Layer, Priority, Scope, Source

ENTRY_COLUMNS = (
    "id", "scope", "namespace", "team", "owner_agent_id", "content", "tags", "priority", "source",
    "confidence", "layer", "created_at", "updated_at", "expires_at", "version", "etag", "conflict",
    "conflict_of", "session_id", "promoted_from", "compacted", "superseded_by",
)
SELECT_ENTRY = f"SELECT {', '.join(ENTRY_COLUMNS)} FROM entries"
INSERT_ENTRY = (
    f"INSERT INTO entries ({', '.join(ENTRY_COLUMNS)}) "
    f"VALUES ({', '.join('%s' for _ in ENTRY_COLUMNS)})"
)
UPDATE_ENTRY = (
    "UPDATE entries SET content = %s, tags = %s, priority = %s, confidence = %s, layer = %s, "
    "expires_at = %s, updated_at = %s, superseded_by = %s, version = version + 1, etag = %s "
    "WHERE id = %s AND etag = %s AND version = %s"
)


def entry_params(entry: Entry) -> tuple[object, ...]:
    return (
        entry.id, entry.scope.value, entry.namespace, entry.team, entry.owner_agent_id, entry.content,
        list(entry.tags), entry.priority.value, entry.source.value, entry.confidence,
        entry.layer.value, entry.created_at, entry.updated_at, entry.expires_at, entry.version,
        entry.etag, entry.conflict, entry.conflict_of, entry.session_id, entry.promoted_from,
        entry.compacted, entry.superseded_by,
    )


def update_params(entry: Entry, expected_etag: str) -> tuple[object, ...]:
    """`entry` is the new state; its version must be the stored version + 1 (checked in SQL)."""
    return (
        entry.content, list(entry.tags), entry.priority.value, entry.confidence, entry.layer.value,
        entry.expires_at, entry.updated_at, entry.superseded_by, entry.etag,
        entry.id, expected_etag, entry.version - 1,
    )


_SCOPES = {m.value: m for m in Scope}
_PRIORITIES = {m.value: m for m in Priority}
_SOURCES = {m.value: m for m in Source}
_LAYERS = {m.value: m for m in Layer}


def row_to_entry(row: tuple[Any, ...]) -> Entry:
    """Map a row selected with `SELECT_ENTRY` (columns in `ENTRY_COLUMNS` order)."""
    (entry_id, scope, namespace, team, owner, content, tags, priority, source, confidence, layer,
     created_at, updated_at, expires_at, version, etag, conflict, conflict_of, session_id, promoted_from,
     compacted, superseded_by) = row
    return Entry(
        id=entry_id, scope=_SCOPES[scope], namespace=namespace, team=team, owner_agent_id=owner, content=content,
        tags=tuple(tags), priority=_PRIORITIES[priority], source=_SOURCES[source], confidence=confidence,
        layer=_LAYERS[layer], created_at=created_at, updated_at=updated_at, expires_at=expires_at, version=version,
        etag=etag, conflict=conflict, conflict_of=conflict_of, session_id=session_id, promoted_from=promoted_from,
        compacted=compacted, superseded_by=superseded_by,
    )
