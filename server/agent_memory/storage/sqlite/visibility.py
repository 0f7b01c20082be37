"""Visibility areas as SQLite SQL (`agent_memory.storage.frame.visibility` writes it)."""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.core.access.visibility import Area
from agent_memory.storage.frame import visibility
from agent_memory.storage.frame.visibility import subtree_bounds
from agent_memory.storage.sqlite.dialect import SQLITE

__all__ = ["area_clause", "subtree_bounds"]


def area_clause(areas: Sequence[Area], *, alias: str = "", pinned: bool = False,
                owners: bool = True) -> tuple[str, list[object]]:
    """`?` placeholders; `pinned` keeps SQLite off the columns' indexes (see the frame's)."""
    return visibility.area_clause(SQLITE, areas, alias=alias, pinned=pinned, owners=owners)
