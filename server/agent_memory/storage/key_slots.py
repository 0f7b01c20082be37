"""Where a key is unique (`memory_crud` create's `key`), on both stores.

A key names one entry per place (scope, namespace, team) and *slot*: an entry without a read list
holds its key in the place's shared slot (''); an entry with a read list holds it in its owner's
own slot. So an entry a caller may not read never takes a key from that caller: a keyed create by
an agent the list leaves out finds the shared slot free (or held by an entry it can read) and
never learns that the hidden entry exists. The slot follows the read list (the index is on an
expression of it), so an update that adds or removes a list moves the entry between slots.
"""

from __future__ import annotations

from typing import Any

# The slot an entry holds its key in: '' (shared) without a read list, else its owner's id.
KEY_SLOT = "(CASE WHEN read_agents IS NULL THEN '' ELSE owner_agent_id END)"


def sqlite_019_key_slots(conn: Any) -> None:
    conn.execute("DROP INDEX entries_by_key")
    conn.execute(f"CREATE UNIQUE INDEX entries_by_key ON entries (scope, namespace, COALESCE(team, ''), key, "
                 f"{KEY_SLOT}) WHERE key IS NOT NULL AND conflict = 0")


def postgres_016_key_slots(conn: Any) -> None:
    conn.execute("DROP INDEX entries_by_key")
    conn.execute(f"CREATE UNIQUE INDEX entries_by_key ON entries (scope, namespace, (COALESCE(team, '')), key, "
                 f"{KEY_SLOT}) WHERE key IS NOT NULL AND NOT conflict")
