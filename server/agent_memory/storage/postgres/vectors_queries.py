"""The search side of `PgVectorRuntime` (the core `SemanticIndex` port, and `cosines` for
reflection's `Meaning` through `VectorMeaning`): the query embedded here, the search run in the
database (`vectors_search`), and read-your-writes embedding of entries still queued."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import structlog

from agent_memory.core.model.models import Entry
from agent_memory.core.ports import Partition, SemanticUnavailable
from agent_memory.storage.embedding.embedder import OnnxEmbedder
from agent_memory.storage.embedding.fresh import FreshVectors
from agent_memory.storage.embedding.queries import LOADING, QueryVectors
from agent_memory.storage.postgres import vectors_outbox, vectors_search
from agent_memory.storage.postgres.database import PostgresDatabase

T = TypeVar("T")

log = structlog.get_logger("agent_memory.vectors")


class PgVectorQueries:
    """Base of `PgVectorRuntime`, which owns the state below and loads the model."""

    _db: PostgresDatabase
    _embedder: OnnxEmbedder | None
    _ready: bool  # the model loaded, and the one that made the stored vectors
    _problem: str | None
    _stopping: bool
    _load_wait: float
    _fresh: FreshVectors
    _queries: QueryVectors
    _query_executor: ThreadPoolExecutor
    _sizes: vectors_search.PartitionSizes

    async def _loaded(self) -> OnnxEmbedder:
        """At start-up, wait (bounded by `load_wait_seconds`) for the model to load."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._load_wait
        while not self._ready and self._problem == LOADING and not self._stopping and loop.time() < deadline:
            await asyncio.sleep(0.02)
        if not self._ready or self._embedder is None:
            raise SemanticUnavailable(self._problem or LOADING)
        return self._embedder

    async def _embed_query(self, embedder: OnnxEmbedder, texts: list[str]) -> Any:
        # Queries get their own thread so they never wait behind an indexing batch.
        return await asyncio.get_running_loop().run_in_executor(self._query_executor, embedder.embed_array, texts)

    async def _read(self, work: Callable[[Any], T]) -> T:
        try:
            return await self._db.read(work, snapshot=True)
        except Exception as exc:
            log.warning("semantic_search_failed", error=type(exc).__name__, store="postgres")
            raise SemanticUnavailable("semantic search failed; answered from keywords only") from None

    def inline_embedding(self, seconds: float, most: int) -> None:
        """How long one call may spend embedding entries not yet indexed, and how many a call may
        consider (the kept vectors then hold at least twice that many: `storage/embedding/fresh.py`)."""
        self._fresh.configure(seconds, most)

    async def nearest(self, text: str, partitions: list[Partition], limit: int
                      ) -> tuple[list[tuple[str, float]], list[float]]:
        embedder = await self._loaded()
        vector = self._queries.get(embedder.name, text)
        if vector is None:
            vector = (await self._embed_query(embedder, [text]))[0].tolist()
            self._queries.keep(embedder.name, text, vector)
        literal = vectors_outbox.vector_text(vector)
        found = await self._read(lambda conn: vectors_search.nearest(conn, literal, partitions, limit, self._sizes))
        return found, vector

    async def vectors_ahead(self, entry_ids: list[str]) -> None:
        """Nothing to read ahead: `similarities` is one query in the database, with the vector."""
        return None

    async def similarities(self, vector: list[float], partitions: list[Partition],
                           entry_ids: list[str], ahead: object | None = None) -> dict[str, float]:
        if not entry_ids:
            return {}
        literal = vectors_outbox.vector_text(vector)
        return await self._read(lambda conn: vectors_search.similarities(conn, literal, partitions, entry_ids))

    async def fresh_similarities(self, vector: list[float], entries: list[Entry]) -> dict[str, float]:
        """Embed these entries now (they wait in the outbox; newest first), for at most the in-line
        budget (`storage/embedding/fresh.py`), and return the cosine to `vector` of those covered (the
        others are left out). Raises SemanticUnavailable without a model here."""
        if not self._ready or self._embedder is None:
            raise SemanticUnavailable(self._problem or "semantic search is not loaded in this process")
        return await self._fresh.similarities(vector, entries, self._embedder.embed_array, self._in_query_thread)

    async def _in_query_thread(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._query_executor, fn)

    async def cosines(self, texts: list[str], entries: list[Entry]) -> list[dict[str, float]]:
        """For reflection's consolidation (`VectorMeaning`): the cosine of each text to each entry,
        never waiting for the model. Entries' vectors come from `entry_vectors` where indexed,
        else are embedded now. Raises SemanticUnavailable while the model is not loaded here."""
        if not self._ready or self._embedder is None:
            raise SemanticUnavailable(self._problem or "the embedding model is not loaded in this process")
        vectors = [row.tolist() for row in await self._embed_query(self._embedder, texts)]
        ids = [e.id for e in entries]
        literals = [vectors_outbox.vector_text(v) for v in vectors]
        stored = await self._read(lambda conn: [vectors_search.similarities(conn, literal, None, ids)
                                                for literal in literals]) if ids else [{} for _ in texts]
        out = []
        for vector, found in zip(vectors, stored, strict=True):
            missing = [e for e in entries if e.id not in found]
            if missing:  # all of them, however long it takes (no budget)
                found.update(await self._fresh.similarities(vector, missing, self._embedder.embed_array,
                                                            self._in_query_thread, float("inf")))
            out.append(found)
        return out
