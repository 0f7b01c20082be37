"""Mapping between `Entry` and its PostgreSQL row: tags as text[], flags as boolean, psycopg `%s`
placeholders (`agent_memory.storage.entry_rows` has the rest)."""

from __future__ import annotations

from typing import Any

from agent_memory.core.model.models import Entry
from agent_memory.storage.entry_rows import (
    ENTRY_COLUMNS,
    entry_from,
    entry_statements,
    entry_values,
    keyed_upsert,
    listed_key_update,
    update_values,
)
from agent_memory.storage.key_slots import KEY_SLOT

__all__ = ["ENTRY_COLUMNS", "INSERT_ENTRY", "KEY_HOLDER", "LISTED_KEY_UPDATE", "SELECT_ENTRY", "UPDATE_ENTRY",
           "UPSERT_KEYED", "entry_params", "row_to_entry", "update_params"]

SELECT_ENTRY, INSERT_ENTRY, UPDATE_ENTRY = entry_statements("%s")
UPSERT_KEYED = keyed_upsert("%s", "NOT conflict")
# The writer owns the entry or its read list (text[]) names it.
LISTED_KEY_UPDATE = listed_key_update("%s", "NOT conflict", "(owner_agent_id = %s OR %s = ANY(read_agents))")
KEY_HOLDER = ("SELECT id FROM entries WHERE scope = %s AND namespace = %s "
              f"AND COALESCE(team, '') = %s AND key = %s AND NOT conflict AND {KEY_SLOT} = %s")
_TAGS, _CONFLICT, _COMPACTED, _READERS = (ENTRY_COLUMNS.index(c)
                                          for c in ("tags", "conflict", "compacted", "read_agents"))


def _same(value: object) -> object:
    return value


def entry_params(entry: Entry) -> tuple[object, ...]:
    return entry_values(entry, _same, _same)


def update_params(entry: Entry, expected_etag: str) -> tuple[object, ...]:
    return update_values(entry, expected_etag, _same)


def row_to_entry(row: tuple[Any, ...]) -> Entry:
    """Map a row selected with `SELECT_ENTRY` (columns in `ENTRY_COLUMNS` order)."""
    readers = row[_READERS]
    return entry_from(row, tuple(row[_TAGS]), row[_CONFLICT], row[_COMPACTED], tuple(readers) if readers else ())
