"""Embedder + Chroma index, loaded lazily off the event loop, kept in step with SQLite through the
outbox (by the background task in `sync.py`), and searched for semantic candidates (implements
the core `SemanticIndex` port)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio
import structlog

from agent_memory.storage.chroma import outbox, pipeline
from agent_memory.storage.chroma.chroma_index import ChromaIndex
from agent_memory.storage.chroma.owner_link import OwnerLink, OwnerService, socket_path
from agent_memory.storage.chroma.ownership import OwnedElsewhere
from agent_memory.storage.chroma.search import VectorSearch
from agent_memory.storage.chroma.sync import REBUILD_AFTER_FAILURES, IndexInconsistent, VectorSync
from agent_memory.storage.embedding import health
from agent_memory.storage.embedding.embedder import EmbedderUnavailable, ModelFiles
from agent_memory.storage.embedding.fresh import FreshVectors, Reusing
from agent_memory.storage.embedding.health import TaskHealth
from agent_memory.storage.embedding.queries import QueryVectors
from agent_memory.storage.embedding.task import background_executor
from agent_memory.storage.failures import storage_reason
from agent_memory.storage.sqlite.database import Database

T = TypeVar("T")
DELETE_BATCH = 500  # deletions need no embedding: larger batches
QUIET_SECONDS = 0.25  # no write for this long: indexing may use both cores

log = structlog.get_logger("agent_memory.vectors")


class VectorRuntime(VectorSync, VectorSearch):
    def __init__(self, db: Database, index: ChromaIndex, model_files: Callable[[], ModelFiles], *,
                 load_wait_seconds: float = 0.0) -> None:
        """Args:
            load_wait_seconds: how long a search that arrives while the model and index are still
                loading (at start-up) waits for them before answering keyword-only.
        """
        self._init_task()
        self._db = db
        self._load_wait = load_wait_seconds
        self._fresh = FreshVectors()  # entries embedded in a call, ahead of the index
        self._queries = QueryVectors()  # recent query texts' vectors
        self._index = index
        self._model_files = model_files
        # Indexing embeds the next batch here while the indexing thread writes the last one.
        self._embed_executor = background_executor("vector-embedding")
        self._index_open = False
        self.applied = 0
        self._failures = 0
        self._repair_due = False
        self._rebuilding = False
        self._verified = False
        self._model_agreed = False  # the recorded vector space is this process's model's
        self._step = "load"
        self._health = TaskHealth(index.directory if index.local else None)
        self._cleanup: asyncio.Future[int] | None = None
        self._link: OwnerLink | None = None  # set while another process owns the index
        self._service: OwnerService | None = None  # set while this process owns it
        self._loading = False  # `_load` is running on the indexing thread
        # Set by a process that ends as soon as this closes (a stdio server): closing then does not
        # wait for a load still in flight (up to a second or more of importing Chroma and ONNX
        # Runtime and loading the model), which the process's end abandons as a kill would.
        self.abandon_load_on_close = False

    # -- lifecycle ---------------------------------------------------------------------------

    def _threads(self) -> list[ThreadPoolExecutor]:
        return [*super()._threads(), self._embed_executor]

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._stop_task()
            if self.abandon_load_on_close and self._loading and self._embedder is None:
                # The first load, still in flight: nothing was applied yet (the index opens and the
                # model loads before any apply), so it is left to the process's end, as a kill would
                # leave it; the index's lock goes with the process.
                log.info("vector_load_abandoned")
                self._health.remove()
                self._shutdown_threads(wait=False)
                return
            if self._cleanup is not None:
                await self._cleanup
            await self._release()
            self._health.remove()
        self._shutdown_threads()

    async def _release(self) -> None:
        """Close the index and give up its lock (the owner socket first: the next owner binds anew)."""
        self._index_open = False
        if self._service is not None:
            await self._service.aclose()
            self._service = None
        if self._index.holds_lock or self._index.has_client:
            await self._call(self._index.close)

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def _load(self) -> None:
        self._loading = True
        try:
            self._load_index_and_model()
        finally:
            self._loading = False

    def _load_index_and_model(self) -> None:
        # The index first: a process that does not own it never needs the model.
        self._open_index()
        if self._embedder is None:
            try:
                self._load_embedders(self._model_files())
            except BaseException:
                # Without a model this process cannot apply the outbox: let another one own it.
                self._index.close()
                self._index_open = False
                raise

    async def _ensure_loaded(self) -> bool:
        """For operator commands: like `_open`, but a failure is a False with `problem` set."""
        try:
            return await self._open()
        except EmbedderUnavailable as exc:
            self._problem = f"semantic search unavailable: {exc}"
        except Exception as exc:
            self._problem = health.problem_text(self._step, exc)
        return False

    async def _open(self) -> bool:
        """Open the index as its owner, load the model and (once) check the index against SQLite.
        False when another process owns the index (searches are sent there). Raises on failure."""
        if self._embedder is not None and self._index_open and self._model_agreed \
                and (self._verified or self._rebuilding):
            return True
        self._step = "load"
        try:
            await self._call(self._load)
        except OwnedElsewhere as exc:
            # Searches go to the owner; this process's writes wait in the shared outbox for it.
            # Ownership is tried again on every pass of the sync loop, to take over when it exits.
            if self._link is None and self._index.directory is not None:
                log.info("vector_index_owned_elsewhere", owner=str(exc))
                self._link = OwnerLink(socket_path(self._index.directory), str(exc))
            self._problem = None
            self._repair_due = False  # the owner checks and repairs it
            return False
        except EmbedderUnavailable:
            raise
        except Exception as exc:
            if self._index.local and storage_reason(exc) is None:
                self._failures += 1
                self._repair_due = self._repair_due or self._failures >= REBUILD_AFTER_FAILURES
            raise
        if self._link is not None:
            log.info("vector_index_taken_over")
            self._link = None
        if self._index.local and self._service is None and self._index.directory is not None:
            service = OwnerService(socket_path(self._index.directory), self._nearest_here, self._similarities_here)
            try:
                await service.start()
                self._service = service
            except OSError as exc:  # other processes then answer keyword-only, and say so
                log.warning("vector_owner_socket_failed", error=str(exc))
        if not self._model_agreed:
            self._step = "check"
            await self._agree_on_model()
        if not self._verified and not self._rebuilding:
            self._step = "check"
            if not await self._consistent():
                log.error("vector_index_inconsistent")
                self._repair_due = self._index.local  # repaired at the top of the sync loop
                raise IndexInconsistent("the vector index lost entries")
            self._verified = True
        if not self._rebuilding:
            self._problem = None
        log.info("semantic_search_ready", model=self._embedder.name if self._embedder else None)
        return True

    async def _requeue_all(self) -> None:
        await outbox.requeue_all(self._db, self._embedder.space if self._embedder else None)

    async def _agree_on_model(self) -> None:
        """Vectors of two models never compare: an index made by another model (the packaged one
        replaced, `embedding_model_dir` changed) is rebuilt with this one, never searched with it.
        Raises: IndexInconsistent (the rebuild is due)."""
        assert self._embedder is not None
        space = self._embedder.space
        recorded = await outbox.recorded_model(self._db)
        if recorded != space and recorded is not None and not self._rebuilding:
            log.warning("vector_index_model_changed", made_with=recorded, loaded=space)
            if not self._index.local:  # a Chroma server's collection: not ours to drop unasked
                raise RuntimeError(f"the vector index was made with the model {recorded}, this server loads "
                                   f"{space}: run `agent-memory reindex` to rebuild it with this one")
            self._repair_due = True
            raise IndexInconsistent(f"the vector index was made with the model {recorded}, this process "
                                    f"loads {space}: rebuilding it")
        if recorded != space:  # the first vectors, a store from before models were recorded, or a rebuild
            await outbox.record_model(self._db, space)
        self._model_agreed = True

    async def _consistent(self) -> bool:
        """At start: does every partition hold as many vectors as SQLite says it should, allowing
        for its own entries still queued for indexing? A truncated or stale directory fails this
        (changes queued for other partitions, and deletions, never excuse a loss)."""
        expected, queued = await outbox.expected_counts(self._db)
        counts = await self._call(self._index.counts, list(expected))
        return all(n - counts.get(name, 0) <= queued.get(name, 0) for name, n in expected.items())

    async def apply_pending(self) -> int:
        """Apply the outbox to the index until it is empty (`pipeline`); returns the rows consumed."""
        assert self._index_embedder is not None and self._bulk_embedder is not None
        return await pipeline.apply_run(self._db, self._embed_batch, self._write_batch, self._clock)

    async def _embed_batch(self, batch: outbox.Batch) -> Any:
        if not batch.live:
            return None
        quiet = time.monotonic() - self._last_write > QUIET_SECONDS
        embedder = self._bulk_embedder if quiet else self._index_embedder
        reusing = Reusing(self._fresh, embedder)  # what a retrieve embedded in-line is not embedded again

        def work() -> Any:
            with self._clock.step("embed"):
                return outbox.embed_batch(reusing, batch)  # type: ignore[arg-type]

        return await asyncio.get_running_loop().run_in_executor(self._embed_executor, work)

    async def _write_batch(self, batch: outbox.Batch, vectors: Any) -> outbox.Applied:
        applied = await self._call(outbox.write_batch, self._index, batch, vectors, self._clock)
        self.applied += len(batch.seqs)
        return applied

    async def backlog(self) -> int:
        return await outbox.backlog(self._db)

    async def take_over(self) -> bool:
        """For operator commands: open the index as its owner (model loaded); False when a
        server owns it (see `owner_note`) or it cannot be opened."""
        self._verified = True  # the command does its own work; no start-up check
        return await self._ensure_loaded()

    async def apply_deletions(self) -> int | None:
        """For operator commands (erase): apply the queued deletions to the index, which needs no
        model and leaves every queued upsert to the servers. Returns how many were applied; None
        when another process owns the index (it applies them first thing, see `outbox`).
        Raises: whatever opening or changing the index raises."""
        try:
            await self._call(self._open_index)
        except OwnedElsewhere as exc:
            self._problem = str(exc)  # for `owner_note`
            return None
        done = 0
        while (batch := await outbox.next_deletions(self._db, DELETE_BATCH)) is not None:
            applied = await self._call(outbox.apply_batch, self._index, None, batch)
            await outbox.forget(self._db, batch.seqs, applied)
            done += len(batch.seqs)
        return done

    def _open_index(self) -> None:
        if not self._index_open:
            self._index.open()
            self._index_open = True

    def owner_note(self) -> str:
        return self._link.owner if self._link else (self._problem or "the vector index")

    async def rebuild(self) -> None:
        """Drop the index and queue every entry again (used by `reindex`)."""
        self._verified = True  # about to be rebuilt: no point checking it first
        self._model_agreed = True  # nor its model: the rebuild records this one's
        if not await self._ensure_loaded():
            raise RuntimeError(self._link.owner if self._link else self._problem or "vector index unavailable")
        await self._call(self._index.reset)
        await self._requeue_all()
        self.notify()
