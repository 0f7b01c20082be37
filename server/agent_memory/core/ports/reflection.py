"""Ports for reflection: distilling turns into facts, and comparing meanings."""

from __future__ import annotations

from typing import Protocol

from agent_memory.core.model.models import Entry
from agent_memory.core.model.statements import Insight, Turn

# Reflection: distilling turns into facts, and comparing meanings.


class DistillFailed(Exception):
    """The distiller could not give usable facts (unreachable, refused, malformed output)."""


class Distiller(Protocol):
    async def distil(self, turns: list[Turn], max_items: int, known: list[Entry]) -> list[Insight]:
        """`known`: facts already remembered (an insight may name one it `replaces`).
        Raises: DistillFailed."""
        ...


class MeaningUnavailable(Exception):
    """The embedding model is not loaded in this process."""


class Meaning(Protocol):
    async def cosines(self, texts: list[str], entries: list[Entry]) -> list[dict[str, float]]:
        """Cosine of each text to each entry (by id). Raises: MeaningUnavailable."""
        ...
