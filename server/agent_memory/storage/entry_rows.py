"""The `entries` row, dialect-neutral: its columns, its statements for a placeholder style, and
`Entry` to and from its values. Each store's `rows` module only says how tags and flags are
stored (SQLite: JSON text and 0/1; PostgreSQL: text[] and boolean)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any

from agent_memory.core.models import Domain, Entry, Layer, Priority, Scope, Source

ENTRY_COLUMNS = (
    "id", "scope", "namespace", "team", "owner_agent_id", "content", "tags", "priority", "source",
    "confidence", "layer", "created_at", "updated_at", "expires_at", "version", "etag", "conflict",
    "conflict_of", "session_id", "promoted_from", "compacted", "superseded_by", "key", "domain",
    "read_agents",
)
_UPSERTED = ("content", "tags", "priority", "source", "confidence", "layer", "expires_at", "updated_at", "etag",
             "domain")
_UPDATED = ("content", "tags", "priority", "confidence", "layer", "expires_at", "updated_at", "superseded_by",
            "domain", "read_agents")


def entry_statements(mark: str) -> tuple[str, str, str]:
    """SELECT (columns in ENTRY_COLUMNS order), INSERT and compare-and-swap UPDATE of an entry,
    with `mark` as the placeholder ("?" or "%s")."""
    select = f"SELECT {', '.join(ENTRY_COLUMNS)} FROM entries"
    insert = f"INSERT INTO entries ({', '.join(ENTRY_COLUMNS)}) VALUES ({', '.join(mark for _ in ENTRY_COLUMNS)})"
    update = (f"UPDATE entries SET {', '.join(f'{c} = {mark}' for c in _UPDATED)}, version = version + 1, "
              f"etag = {mark} WHERE id = {mark} AND etag = {mark} AND version = {mark}")
    return select, insert, update


def keyed_upsert(mark: str, not_conflict: str, reads: str = "TRUE") -> str:
    """INSERT of a keyed entry that, when a non-conflict entry of the same (scope, namespace, team)
    holds its key, updates that entry instead (content and metadata, version + 1, the new etag),
    returning the stored row: one statement, made atomic by the unique index on keys. In agent
    scope only the owner's entry is updated (no row comes back when another owns the key), and an
    entry whose read list leaves the writer out is never updated (`reads`: that condition, on
    `entries` and `excluded`). Its read list stays as stored."""
    _, insert, _ = entry_statements(mark)
    changed = ", ".join(f"{c} = excluded.{c}" for c in _UPSERTED)
    return (f"{insert} ON CONFLICT (scope, namespace, (COALESCE(team, '')), key) WHERE key IS NOT NULL AND "
            f"{not_conflict} DO UPDATE SET {changed}, superseded_by = NULL, version = entries.version + 1 "
            "WHERE (entries.scope <> 'agent' OR entries.owner_agent_id = excluded.owner_agent_id) "
            f"AND ({reads}) RETURNING {', '.join(ENTRY_COLUMNS)}")


def entry_values(entry: Entry, tags: Callable[[list[str]], object], flag: Callable[[bool], object]
                 ) -> tuple[object, ...]:
    """The INSERT's values, tags and flags stored as `tags` and `flag` make them (a read list as
    tags are, NULL when the entry has none)."""
    return (
        entry.id, entry.scope.value, entry.namespace, entry.team, entry.owner_agent_id, entry.content,
        tags(list(entry.tags)), entry.priority.value, entry.source.value, entry.confidence,
        entry.layer.value, entry.created_at, entry.updated_at, entry.expires_at, entry.version,
        entry.etag, flag(entry.conflict), entry.conflict_of, entry.session_id, entry.promoted_from,
        flag(entry.compacted), entry.superseded_by, entry.key, entry.domain.value if entry.domain else None,
        read_list(entry, tags),
    )


def update_values(entry: Entry, expected_etag: str, tags: Callable[[list[str]], object]) -> tuple[object, ...]:
    """The UPDATE's values: `entry` is the new state; its version must be the stored version + 1
    (checked in SQL)."""
    return (
        entry.content, tags(list(entry.tags)), entry.priority.value, entry.confidence, entry.layer.value,
        entry.expires_at, entry.updated_at, entry.superseded_by, entry.domain.value if entry.domain else None,
        read_list(entry, tags), entry.etag, entry.id, expected_etag, entry.version - 1,
    )


def read_list(entry: Entry, tags: Callable[[list[str]], object]) -> object:
    """The stored read list, as tags are stored: NULL for none, so the common case costs one
    `IS NULL` in the read rule."""
    return tags(list(entry.read_agents)) if entry.read_agents else None


_SCOPES = {m.value: m for m in Scope}
_PRIORITIES = {m.value: m for m in Priority}
_SOURCES = {m.value: m for m in Source}
_LAYERS = {m.value: m for m in Layer}
_DOMAINS = {None: None, **{m.value: m for m in Domain}}


def entry_from(row: tuple[Any, ...], tags: tuple[str, ...], conflict: bool, compacted: bool,
               read_agents: tuple[str, ...] = ()) -> Entry:
    """The Entry of a row selected in ENTRY_COLUMNS order, given its tags, flags and read list decoded."""
    (entry_id, scope, namespace, team, owner, content, _, priority, source, confidence, layer,
     created_at, updated_at, expires_at, version, etag, _, conflict_of, session_id, promoted_from,
     _, superseded_by, key, domain, _) = row
    return _entry((
        entry_id, _SCOPES[scope], namespace, team, owner, content, tags, _PRIORITIES[priority], _SOURCES[source],
        confidence, _LAYERS[layer], created_at, updated_at, expires_at, version, etag, conflict, conflict_of,
        session_id, promoted_from, compacted, superseded_by, key, _DOMAINS[domain], read_agents,
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
