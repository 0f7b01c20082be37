"""The `entries` row, dialect-neutral: its columns, its statements for a placeholder style, and
`Entry` to and from its values. Each store's `rows` module only says how tags and flags are
stored (SQLite: JSON text and 0/1; PostgreSQL: text[] and boolean)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any

from agent_memory.core.model.models import Domain, Entry, Layer, Priority, Scope, Source
from agent_memory.storage.key_slots import KEY_SLOT

ENTRY_COLUMNS = (
    "id", "scope", "namespace", "team", "owner_agent_id", "content", "tags", "priority", "source",
    "confidence", "layer", "created_at", "updated_at", "expires_at", "version", "etag", "conflict",
    "conflict_of", "session_id", "promoted_from", "compacted", "superseded_by", "key", "domain",
    "read_agents",
)
_UPSERTED = ("content", "tags", "priority", "source", "confidence", "layer", "expires_at", "updated_at", "etag",
             "domain")
_UPSERTED_AT = {c: ENTRY_COLUMNS.index(c) for c in _UPSERTED}
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


def keyed_upsert(mark: str, not_conflict: str) -> str:
    """INSERT of a keyed entry that, when a non-conflict entry of the same (scope, namespace, team)
    holds its key in the same slot (`storage/key_slots.py`: the shared one without a read list,
    the owner's own with one), updates that entry instead (content and metadata, version + 1, the
    new etag), returning the stored row: one statement, made atomic by the unique index on keys.
    In agent scope only the owner's entry is updated (no row comes back when another owns the
    key). The holder's read list stays as stored; an entry in the shared slot has none, one in an
    owner's slot is the writer's own, so no entry the writer may not read is ever updated."""
    _, insert, _ = entry_statements(mark)
    changed = ", ".join(f"{c} = excluded.{c}" for c in _UPSERTED)
    return (f"{insert} ON CONFLICT (scope, namespace, (COALESCE(team, '')), key, {KEY_SLOT}) WHERE key IS NOT NULL "
            f"AND {not_conflict} DO UPDATE SET {changed}, superseded_by = NULL, version = entries.version + 1 "
            "WHERE (entries.scope <> 'agent' OR entries.owner_agent_id = excluded.owner_agent_id) "
            f"RETURNING {', '.join(ENTRY_COLUMNS)}")


def listed_key_update(mark: str, not_conflict: str, listed: str) -> str:
    """UPDATE of the read-listed entry a keyed create without a list names for its writer: the
    writer's own, else the newest whose list names the writer (`listed`: that condition, with its
    parameters, written twice). The holder is chosen and re-checked in the one statement, so a
    list changed meanwhile never lets the writer update an entry it may no longer read.
    Parameters: the `_UPSERTED` values, then scope, namespace, team, key, the `listed` parameters,
    the writer, the `listed` parameters again, the writer again."""
    sets = ", ".join(f"{c} = {mark}" for c in _UPSERTED)
    return (f"UPDATE entries SET {sets}, superseded_by = NULL, version = version + 1 WHERE id = ("
            f"SELECT id FROM entries WHERE scope = {mark} AND namespace = {mark} AND COALESCE(team, '') = {mark} "
            f"AND key = {mark} AND {not_conflict} AND read_agents IS NOT NULL AND {listed} "
            f"ORDER BY owner_agent_id = {mark} DESC, updated_at DESC, id DESC LIMIT 1) "
            f"AND read_agents IS NOT NULL AND {listed} AND (scope <> 'agent' OR owner_agent_id = {mark}) "
            f"RETURNING {', '.join(ENTRY_COLUMNS)}")


def upserted_values(params: tuple[object, ...]) -> tuple[object, ...]:
    """The `_UPSERTED` values out of an INSERT's parameters (ENTRY_COLUMNS order)."""
    return tuple(params[_UPSERTED_AT[c]] for c in _UPSERTED)


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
