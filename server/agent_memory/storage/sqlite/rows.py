"""Mapping between `Entry` and its SQLite row."""

from __future__ import annotations

import json
from typing import Any

from agent_memory.core.models import Entry, Layer, Priority, Scope, Source

ENTRY_COLUMNS = (
    "id", "scope", "namespace", "team", "owner_agent_id", "content", "tags", "priority", "source",
    "confidence", "layer", "created_at", "updated_at", "expires_at", "version", "etag", "conflict",
    "conflict_of", "session_id", "promoted_from", "compacted",
)
SELECT_ENTRY = f"SELECT {', '.join(ENTRY_COLUMNS)} FROM entries"
INSERT_ENTRY = (
    f"INSERT INTO entries ({', '.join(ENTRY_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in ENTRY_COLUMNS)})"
)
UPDATE_ENTRY = (
    "UPDATE entries SET content = ?, tags = ?, priority = ?, confidence = ?, layer = ?, "
    "expires_at = ?, updated_at = ?, version = version + 1, etag = ? "
    "WHERE id = ? AND etag = ? AND version = ?"
)


def entry_params(entry: Entry) -> tuple[object, ...]:
    return (
        entry.id, entry.scope.value, entry.namespace, entry.team, entry.owner_agent_id, entry.content,
        json.dumps(list(entry.tags)), entry.priority.value, entry.source.value, entry.confidence,
        entry.layer.value, entry.created_at, entry.updated_at, entry.expires_at, entry.version,
        entry.etag, int(entry.conflict), entry.conflict_of, entry.session_id, entry.promoted_from,
        int(entry.compacted),
    )


def update_params(entry: Entry, expected_etag: str) -> tuple[object, ...]:
    """`entry` is the new state; its version must be the stored version + 1 (checked in SQL)."""
    return (
        entry.content, json.dumps(list(entry.tags)), entry.priority.value, entry.confidence,
        entry.layer.value, entry.expires_at, entry.updated_at, entry.etag,
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
     compacted) = row
    return Entry(
        id=entry_id,
        scope=_SCOPES[scope],
        namespace=namespace,
        team=team,
        owner_agent_id=owner,
        content=content,
        tags=tuple(json.loads(tags)) if tags != "[]" else (),
        priority=_PRIORITIES[priority],
        source=_SOURCES[source],
        confidence=confidence,
        layer=_LAYERS[layer],
        created_at=created_at,
        updated_at=updated_at,
        expires_at=expires_at,
        version=version,
        etag=etag,
        conflict=bool(conflict),
        conflict_of=conflict_of,
        session_id=session_id,
        promoted_from=promoted_from,
        compacted=bool(compacted),
    )
