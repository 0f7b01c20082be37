"""Mapping between `Entry` and its SQLite row: tags as JSON text, flags as 0/1
(`agent_memory.storage.entry_rows` has the rest)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from agent_memory.core.models import Entry
from agent_memory.storage.entry_rows import (
    ENTRY_COLUMNS,
    entry_from,
    entry_statements,
    entry_values,
    keyed_upsert,
    update_values,
)

__all__ = ["ENTRY_COLUMNS", "INSERT_ENTRY", "KEY_HOLDER", "SELECT_ENTRY", "UPDATE_ENTRY", "UPSERT_KEYED",
           "entry_params", "row_to_entry", "update_params"]

SELECT_ENTRY, INSERT_ENTRY, UPDATE_ENTRY = entry_statements("?")
# A keyed create never updates an entry whose read list leaves its writer out (ids hold no '"').
UPSERT_KEYED = keyed_upsert("?", "conflict = 0", "entries.read_agents IS NULL OR entries.owner_agent_id = "
                            "excluded.owner_agent_id OR instr(entries.read_agents, '\"' || excluded.owner_agent_id "
                            "|| '\"') > 0")
KEY_HOLDER = ("SELECT id FROM entries WHERE scope = ? AND namespace = ? "
              "AND COALESCE(team, '') = ? AND key = ? AND conflict = 0")
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
