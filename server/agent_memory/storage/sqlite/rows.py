"""Mapping between `Entry` and its SQLite row."""

from __future__ import annotations

import json
from dataclasses import fields
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
    f"VALUES ({', '.join('?' for _ in ENTRY_COLUMNS)})"
)
UPDATE_ENTRY = (
    "UPDATE entries SET content = ?, tags = ?, priority = ?, confidence = ?, layer = ?, "
    "expires_at = ?, updated_at = ?, superseded_by = ?, version = version + 1, etag = ? "
    "WHERE id = ? AND etag = ? AND version = ?"
)


def entry_params(entry: Entry) -> tuple[object, ...]:
    return (
        entry.id, entry.scope.value, entry.namespace, entry.team, entry.owner_agent_id, entry.content,
        json.dumps(list(entry.tags)), entry.priority.value, entry.source.value, entry.confidence,
        entry.layer.value, entry.created_at, entry.updated_at, entry.expires_at, entry.version,
        entry.etag, int(entry.conflict), entry.conflict_of, entry.session_id, entry.promoted_from,
        int(entry.compacted), entry.superseded_by,
    )


def update_params(entry: Entry, expected_etag: str) -> tuple[object, ...]:
    """`entry` is the new state; its version must be the stored version + 1 (checked in SQL)."""
    return (
        entry.content, json.dumps(list(entry.tags)), entry.priority.value, entry.confidence,
        entry.layer.value, entry.expires_at, entry.updated_at, entry.superseded_by, entry.etag,
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
    return _entry((
        entry_id, _SCOPES[scope], namespace, team, owner, content,
        tuple(json.loads(tags)) if tags != "[]" else (), _PRIORITIES[priority], _SOURCES[source], confidence,
        _LAYERS[layer], created_at, updated_at, expires_at, version, etag, bool(conflict), conflict_of, session_id,
        promoted_from, bool(compacted), superseded_by,
    ))


# A frozen dataclass's __init__ sets each field through object.__setattr__; filling its slots
# directly builds the same Entry about twice as fast (retrieval builds hundreds per call). Only
# when the columns are exactly Entry's fields, else through __init__.
_SLOTS = (tuple(getattr(Entry, name).__set__ for name in ENTRY_COLUMNS)
          if {f.name for f in fields(Entry)} == set(ENTRY_COLUMNS) and not hasattr(Entry, "__post_init__") else None)


def _entry(values: tuple[Any, ...]) -> Entry:
    """An Entry from its field values in ENTRY_COLUMNS order."""
    if _SLOTS is None:
        return Entry(**dict(zip(ENTRY_COLUMNS, values, strict=True)))
    entry = object.__new__(Entry)
    for put, value in zip(_SLOTS, values, strict=True):
        put(entry, value)
    return entry
