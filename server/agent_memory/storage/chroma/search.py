"""The search side of `VectorRuntime` (the core `SemanticIndex` port): nearest neighbours and
similarities from the local index or through the process that owns it, and read-your-writes
embedding of entries the index has not caught up with."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import structlog

from agent_memory.core.model.models import Entry
from agent_memory.core.ports import Partition, SemanticUnavailable
from agent_memory.storage.chroma import outbox
from agent_memory.storage.chroma.chroma_index import ChromaIndex, collection_name
from agent_memory.storage.chroma.owner_link import OwnerLink
from agent_memory.storage.chroma.sync import REBUILD_AFTER_FAILURES
from agent_memory.storage.embedding.embedder import OnnxEmbedder
from agent_memory.storage.embedding.fresh import FreshVectors
from agent_memory.storage.embedding.queries import LOADING, QueryVectors
from agent_memory.storage.sqlite.database import Database

T = TypeVar("T")

log = structlog.get_logger("agent_memory.vectors")


@dataclass(frozen=True, slots=True)
class StoredAhead:
    """`vectors_ahead`'s answer: the entries asked about and the stored vectors found for them."""

    asked: frozenset[str]
    rows: dict[str, bytes]


class VectorSearch:
    """Base of `VectorRuntime`, which owns the state below."""

    _db: Database
    _index: ChromaIndex
    _embedder: OnnxEmbedder | None
    _index_open: bool
    _rebuilding: bool
    _problem: str | None
    _failures: int
    _repair_due: bool
    _stopping: bool
    _wake: asyncio.Event
    _link: OwnerLink | None
    _load_wait: float
    _fresh: FreshVectors
    _queries: QueryVectors
    _query_executor: ThreadPoolExecutor

    def inline_embedding(self, seconds: float, most: int) -> None:
        """How long one call may spend embedding entries not yet indexed, and how many a call may
        consider (the kept vectors then hold at least twice that many: `fresh.py`)."""
        self._fresh.configure(seconds, most)

    async def nearest(self, text: str, partitions: list[Partition], limit: int
                      ) -> tuple[list[tuple[str, float]], list[float]]:
        await self._loaded()
        if self._link is not None:
            return await self._link.nearest(text, partitions, limit)
        return await self._nearest_here(text, partitions, limit)

    async def vectors_ahead(self, entry_ids: list[str]) -> StoredAhead | None:
        """SQLite's copy of these entries' vectors, read before the query's vector is known."""
        if not entry_ids:
            return None
        return StoredAhead(frozenset(entry_ids), dict(await outbox.stored_vectors(self._db, entry_ids)))

    async def similarities(self, vector: list[float], partitions: list[Partition],
                           entry_ids: list[str], ahead: object | None = None) -> dict[str, float]:
        """From SQLite's copy of the vectors (one indexed read, in any process; none for entries
        `ahead` holds); the vector index is asked only for entries indexed before that copy existed."""
        if isinstance(ahead, StoredAhead):
            later = [i for i in entry_ids if i not in ahead.asked]
            stored = [(i, ahead.rows[i]) for i in entry_ids if i in ahead.rows]
            if later:
                stored += await outbox.stored_vectors(self._db, later)
        else:
            stored = await outbox.stored_vectors(self._db, entry_ids)
        found = outbox.cosine(vector, stored)
        missing = [i for i in entry_ids if i not in found]
        if missing:
            try:
                found.update(await self._link.similarities(vector, partitions, missing) if self._link is not None
                             else await self._similarities_here(vector, partitions, missing))
            except SemanticUnavailable:
                if not found:
                    raise
        return found

    async def fresh_similarities(self, vector: list[float], entries: list[Entry]) -> dict[str, float]:
        """Embed these entries now (they wait in the outbox; newest first) with the query model, for
        at most the in-line budget (`fresh.py`), and return the cosine to `vector` of those covered
        (the others are left out). Raises SemanticUnavailable without a model here."""
        if self._embedder is None:
            raise SemanticUnavailable(self._problem or "semantic search is not loaded in this process")
        return await self._fresh.similarities(vector, entries, self._embedder.embed_array, self._search)

    async def cosines(self, texts: list[str], entries: list[Entry]) -> list[dict[str, float]]:
        """For reflection's consolidation: the cosine of each text to each entry, by the model
        loaded in this process (never waiting for it). Entries' vectors come from SQLite's copy
        where indexed, else are embedded now (and kept, as for `fresh_similarities`).
        Raises SemanticUnavailable while the model is not loaded here."""
        if self._embedder is None:
            raise SemanticUnavailable(self._problem or "the embedding model is not loaded in this process")
        embedder = self._embedder
        vectors = await self._search(lambda: embedder.embed_array(texts))
        stored = await outbox.stored_vectors(self._db, [e.id for e in entries]) if entries else []
        out = []
        for vector in vectors:
            found = outbox.cosine(vector.tolist(), stored)
            missing = [e for e in entries if e.id not in found]
            if missing:  # all of them, however long it takes (no budget)
                found.update(await self._fresh.similarities(vector.tolist(), missing, embedder.embed_array,
                                                            self._search, float("inf")))
            out.append(found)
        return out

    async def _nearest_here(self, text: str, partitions: list[Partition], limit: int
                            ) -> tuple[list[tuple[str, float]], list[float]]:
        embedder = self._embedder
        model = embedder.name if embedder is not None else ""
        known = self._queries.get(model, text)

        def search() -> tuple[list[tuple[str, float]], list[float]]:
            assert embedder is not None
            vector = known if known is not None else embedder.embed([text])[0]
            names = [collection_name(p.scope, p.namespace) for p in partitions]
            return self._index.query(names, vector, limit), vector

        hits, vector = await self._search(search)
        if known is None:
            self._queries.keep(model, text, vector)
        return hits, vector

    async def _similarities_here(self, vector: list[float], partitions: list[Partition],
                                 entry_ids: list[str]) -> dict[str, float]:
        names = [collection_name(p.scope, p.namespace) for p in partitions]
        return dict(await self._search(lambda: self._index.similarities(names, vector, entry_ids)))

    async def _loaded(self) -> None:
        """At start-up, wait (bounded by `load_wait_seconds`) until the model and index are loaded,
        or another process is found to own the index, or loading has failed for good."""
        deadline = asyncio.get_running_loop().time() + self._load_wait
        while (self._link is None and (self._embedder is None or not self._index_open)
               and self._problem == LOADING and not self._stopping
               and asyncio.get_running_loop().time() < deadline):
            await asyncio.sleep(0.02)

    async def _search(self, fn: Callable[[], T]) -> T:
        if self._embedder is None or not self._index_open or self._rebuilding:
            raise SemanticUnavailable(self._problem or "semantic search is loading")
        try:
            return await self._query_call(fn)
        except Exception as exc:
            log.warning("semantic_search_failed", error=type(exc).__name__)
            self._failures += 1
            if self._failures >= REBUILD_AFTER_FAILURES and self._index.local:
                self._index_open = False  # the sync task sees it and repairs
                self._repair_due = True
                self._wake.set()
            raise SemanticUnavailable("semantic search failed; answered from keywords only") from None

    async def _query_call(self, fn: Callable[[], T]) -> T:
        # Queries get their own thread so they never wait behind an indexing batch.
        return await asyncio.get_running_loop().run_in_executor(self._query_executor, fn)
