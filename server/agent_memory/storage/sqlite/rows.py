"""Mapping between `Entry` and its SQLite row."""

from __future__ import annotations

import json
import sqlite3

from agent_memory.core.models import Entry, Layer, Priority, Scope, Source

ENTRY_COLUMNS = (
    "id", "scope", "namespace", "team", "owner_agent_id", "content", "tags", "priority", "source",
    "confidence", "layer", "created_at", "updated_at", "expires_at", "version", "etag", "conflict",
    "conflict_of", "session_id", "promoted_from",
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
    )


def update_params(entry: Entry, expected_etag: str) -> tuple[object, ...]:
    """`entry` is the new state; its version must be the stored version + 1 (checked in SQL)."""
    return (
        entry.content, json.dumps(list(entry.tags)), entry.priority.value, entry.confidence,
        entry.layer.value, entry.expires_at, entry.updated_at, entry.etag,
        entry.id, expected_etag, entry.version - 1,
    )


def row_to_entry(row: sqlite3.Row) -> Entry:
    return Entry(
        id=row["id"],
        scope=Scope(row["scope"]),
        namespace=row["namespace"],
        team=row["team"],
        owner_agent_id=row["owner_agent_id"],
        content=row["content"],
        tags=tuple(json.loads(row["tags"])),
        priority=Priority(row["priority"]),
        source=Source(row["source"]),
        confidence=row["confidence"],
        layer=Layer(row["layer"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        expires_at=row["expires_at"],
        version=row["version"],
        etag=row["etag"],
        conflict=bool(row["conflict"]),
        conflict_of=row["conflict_of"],
        session_id=row["session_id"],
        promoted_from=row["promoted_from"],
    )
