"""The port of supersede chains: which facts a later fact replaced (`superseded_by` pointing at it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agent_memory.core.model.models import Entry


class LineageStore(Protocol):
    async def superseded_facts(self, entry_ids: Sequence[str]) -> list[Entry]:
        """Every stored entry whose `superseded_by` is one of `entry_ids` (the facts they replaced),
        oldest first (created_at, id). No visibility filter: the caller's gate is applied by the core."""
        ...
