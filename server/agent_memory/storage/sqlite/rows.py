"""Mapping between `Entry` and its SQLite row: tags as JSON text, flags as 0/1
(`agent_memory.storage.entry_rows` has the rest)."""

from __future__ import annotations

import json
from functools import lru_cache
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

SELECT_ENTRY, INSERT_ENTRY, UPDATE_ENTRY = entry_statements("?")
UPSERT_KEYED = keyed_upsert("?", "conflict = 0")
# The writer owns the entry or its read list names it (JSON text of ids, which hold no '"').
LISTED_KEY_UPDATE = listed_key_update("?", "conflict = 0", "(owner_agent_id = ? OR instr(read_agents, ?) > 0)")
KEY_HOLDER = ("SELECT id FROM entries WHERE scope = ? AND namespace = ? "
              f"AND COALESCE(team, '') = ? AND key = ? AND conflict = 0 AND {KEY_SLOT} = ?")
_TAGS, _CONFLICT, _COMPACTED, _READERS = (ENTRY_COLUMNS.index(c)
                                          for c in ("tags", "conflict", "compacted", "read_agents"))


def entry_params(entry: Entry) -> tuple[object, ...]:
    return entry_values(entry, json.dumps, int)


def update_params(entry: Entry, expected_etag: str) -> tuple[object, ...]:
    return update_values(entry, expected_etag, json.dumps)


@lru_cache(maxsize=4096)
def _strings(text: str) -> tuple[str, ...]:
    """A JSON array of strings (tags, a read list) as a tuple: the same few sets recur on most
    rows, so each is decoded once (the tuple is immutable, safe to share)."""
    return tuple(json.loads(text))


def row_to_entry(row: tuple[Any, ...]) -> Entry:
    """Map a row selected with `SELECT_ENTRY` (columns in `ENTRY_COLUMNS` order)."""
    tags, readers = row[_TAGS], row[_READERS]
    return entry_from(row, _strings(tags) if tags != "[]" else (), bool(row[_CONFLICT]),
                      bool(row[_COMPACTED]), _strings(readers) if readers is not None else ())
