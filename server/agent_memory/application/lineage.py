"""Lineage: the supersede chain of a fact (what it replaced, as the caller may see it) and undoing a
supersede, for every caller (`memory_crud unsupersede`, the console's history and undo)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agent_memory.core.memories.lineage import LineageService, Replaced, Restoration
from agent_memory.core.model.commands import Call
from agent_memory.core.model.models import Entry, Scope


class Lineage:
    def __init__(self, lineage: LineageService) -> None:
        self._lineage = lineage

    async def replaced(self, call: Call, entry_ids: Sequence[str]) -> dict[str, tuple[Replaced, ...]]:
        """For each of `entry_ids`, the facts it replaced that the caller may read, oldest first."""
        return await self._lineage.replaced(call.caller, entry_ids)

    async def unsupersede(self, call: Call, scope: Scope, namespace: str, item: Restoration) -> Entry:
        """Raises: Forbidden, NotFound, InvalidParams (a current fact), Conflict (see
        `LineageService.unsupersede`)."""
        return await self._lineage.unsupersede(replace(call, action="unsupersede"), scope, namespace, item)
