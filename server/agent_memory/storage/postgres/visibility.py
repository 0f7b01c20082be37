"""Visibility areas as PostgreSQL SQL (`agent_memory.storage.frame.visibility` writes it). The
namespace columns are `COLLATE "C"` (byte order, whatever the database's locale), which the
half-open namespace ranges rely on."""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.core.access.visibility import Area
from agent_memory.storage.frame import visibility
from agent_memory.storage.frame.visibility import subtree_bounds
from agent_memory.storage.postgres.dialect import POSTGRES

__all__ = ["area_clause", "subtree_bounds"]


def area_clause(areas: Sequence[Area], *, alias: str = "", owners: bool = True) -> tuple[str, list[object]]:
    """psycopg `%s` placeholders."""
    return visibility.area_clause(POSTGRES, areas, alias=alias, owners=owners)
