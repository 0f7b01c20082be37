"""The read-list column of `entries` on both stores (`Entry.read_agents`): the agent ids allowed to
read an entry, besides its owner, within what its scope already allows. NULL when the entry has
none, the common case, which the read rule (`storage/*/visibility.py`) settles with one `IS NULL`.
No index: the rule only ever filters rows the scope and namespace conditions already selected."""

from __future__ import annotations

from typing import Any


def sqlite_018_read_lists(conn: Any) -> None:
    # JSON text of agent ids, like tags.
    conn.execute("ALTER TABLE entries ADD COLUMN read_agents TEXT")


def postgres_015_read_lists(conn: Any) -> None:
    conn.execute("ALTER TABLE entries ADD COLUMN read_agents TEXT[]")
