"""What both vector runtimes share at query time: the text `degraded` says while the model loads,
the vectors of recent query texts, and reflection's `Meaning` port on a runtime."""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol

from agent_memory.core.model.models import Entry
from agent_memory.core.ports import MeaningUnavailable, SemanticUnavailable

LOADING = "semantic search is loading"
QUERY_CACHE = 256  # query texts whose vectors are kept (the most recently used)


class QueryVectors:
    """The vectors of recent query texts (the same text always embeds to the same vector): a
    question asked again, or asked in another mode, is not embedded again. Used on the event loop
    only; keyed by the model's name as well, so a model change never serves another's vectors."""

    def __init__(self, size: int = QUERY_CACHE) -> None:
        self._size = size
        self._vectors: OrderedDict[tuple[str, str], list[float]] = OrderedDict()

    def get(self, model: str, text: str) -> list[float] | None:
        vector = self._vectors.get((model, text))
        if vector is not None:
            self._vectors.move_to_end((model, text))
        return vector

    def keep(self, model: str, text: str, vector: list[float]) -> None:
        self._vectors[(model, text)] = vector
        while len(self._vectors) > self._size:
            self._vectors.popitem(last=False)


class Cosines(Protocol):
    async def cosines(self, texts: list[str], entries: list[Entry]) -> list[dict[str, float]]: ...


class VectorMeaning:
    """Reflection's `Meaning` port on the vector runtime."""

    def __init__(self, vectors: Cosines) -> None:
        self._vectors = vectors

    async def cosines(self, texts: list[str], entries: list[Entry]) -> list[dict[str, float]]:
        try:
            return await self._vectors.cosines(texts, entries)
        except SemanticUnavailable as exc:
            raise MeaningUnavailable(str(exc)) from None
