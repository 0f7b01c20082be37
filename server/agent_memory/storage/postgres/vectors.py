"""Semantic search on PostgreSQL with pgvector (implements the core `SemanticIndex` port, and what
the composition root, reflection's `Meaning` and the operator commands use of a vector runtime).

The embedding model is the one SQLite's path uses (`OnnxEmbedder`), loaded lazily off the event
loop. The vectors live in `entry_vectors`, next to the entries, and are kept in step by applying
the outbox (`vectors_outbox`): every running server applies it, with no owner and no lock to take
over; `notify()` wakes this server after its own writes and a poll notices other servers' writes.
Searches (`vectors_queries`) run in the database (`vectors_search`); entries still queued are
embedded in-line by `fresh_similarities` (read-your-writes, whichever server acknowledged the write).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import anyio
import structlog

from agent_memory.storage.embedding import health
from agent_memory.storage.embedding.embedder import EmbedderUnavailable, ModelFiles
from agent_memory.storage.embedding.fresh import FreshVectors, Reusing
from agent_memory.storage.embedding.health import TaskHealth
from agent_memory.storage.embedding.indexing_clock import IndexingClock
from agent_memory.storage.embedding.queries import QueryVectors
from agent_memory.storage.embedding.task import VectorTask
from agent_memory.storage.postgres import vectors_model, vectors_outbox, vectors_search
from agent_memory.storage.postgres.database import PostgresDatabase
from agent_memory.storage.postgres.vectors_queries import PgVectorQueries

BATCH = 64
BULK_BATCH = 256  # while a backlog lasts (as on SQLite, `storage/chroma/pipeline.py`)
POLL_SECONDS = 1.0  # other servers' writes are noticed within this
QUIET_SECONDS = 0.25  # no write for this long: indexing may use both cores
FIRST_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 10.0

log = structlog.get_logger("agent_memory.vectors")


class EmbeddingTurn:
    """One batch's turn to claim and embed: taken before its transaction begins, given back as
    soon as its texts are embedded (from the database thread) or the transaction ends, so the next
    batch claims and embeds while this one writes its vectors and commits, and no transaction
    waits idle for another batch's embedding (`vectors_outbox.IDLE_LIMIT_MS`)."""

    def __init__(self, lock: asyncio.Lock, loop: asyncio.AbstractEventLoop) -> None:
        self._lock, self._loop = lock, loop
        self._given = False
        self._guard = threading.Lock()

    def give_back(self) -> None:
        """Idempotent; from any thread."""
        with self._guard:
            if self._given:
                return
            self._given = True
        self._loop.call_soon_threadsafe(self._lock.release)


class PgVectorRuntime(PgVectorQueries, VectorTask):
    def __init__(self, db: PostgresDatabase, model_files: Callable[[], ModelFiles], *,
                 load_wait_seconds: float = 0.0, batch: int = BATCH, poll_seconds: float = POLL_SECONDS) -> None:
        """Args:
            load_wait_seconds: how long a search that arrives while the model is still loading
                (at start-up) waits for it before answering keyword-only.
            batch: outbox rows claimed per transaction.
        """
        self._init_task()
        self._db = db
        self._model_files = model_files
        self._load_wait = load_wait_seconds
        self._batch = batch
        self._poll = poll_seconds
        self._model = ""  # its identity (`vectors_model`)
        self._ready = False  # loaded, and the model that made the stored vectors
        self._sizes = vectors_search.PartitionSizes()  # vectors per partition set, for choosing a plan
        self._fresh = FreshVectors()  # entries embedded in a call, ahead of the index
        self._queries = QueryVectors()  # recent query texts' vectors
        self._step = "load"
        self._health = TaskHealth(None)  # failures are logged; PostgreSQL keeps no status files
        self.applied = 0  # outbox rows this process consumed
        self.embedded = 0  # texts this process embedded for the index
        self._light = True  # the last batch was not full: the next is `batch` rows, not `BULK_BATCH`
        self._embedding = asyncio.Lock()  # one batch claims and embeds at a time (`EmbeddingTurn`)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        self._start_task(self._run)

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._stop_task()
        self._shutdown_threads()

    def owner_note(self) -> str:
        return self._problem or "the servers applying the vector outbox"

    # -- the model -----------------------------------------------------------------------------

    def _load(self) -> None:
        if self._embedder is None:
            self._load_embedders(self._model_files())
            assert self._embedder is not None
            self._model = vectors_model.identity(self._embedder.name)

    async def _ensure_loaded(self, *, check_model: bool = True) -> bool:
        """Load the model (once) and check it is the store's; False with `problem` set when it
        cannot be loaded or is another."""
        if self._ready or (self._embedder is not None and not check_model):
            return True
        self._step = "load"
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._load)
            if check_model:
                model = self._model
                await self._db.transact(lambda conn: vectors_model.agree(conn, model))
        except (EmbedderUnavailable, vectors_model.ModelMismatch) as exc:
            self._problem = f"semantic search unavailable: {exc}"
            return False
        except Exception as exc:
            self._problem = health.problem_text("load", exc)
            return False
        self._ready_now()
        return True

    def _ready_now(self) -> None:
        if not self._ready:
            log.info("semantic_search_ready", model=self._model, store="postgres")
        self._ready, self._problem = True, None

    async def take_over(self) -> bool:
        """For operator commands: load the model. There is no owner on PostgreSQL: any process
        may apply the outbox, so this is False only when the model cannot be loaded."""
        return await self._ensure_loaded()

    async def apply_deletions(self) -> int | None:
        """For operator commands (erase): nothing to apply, ever: a deleted entry's vector is
        deleted with it, in the same transaction."""
        return 0

    # -- the outbox applier ------------------------------------------------------------------

    async def _run(self) -> None:
        backoff = FIRST_BACKOFF_SECONDS
        while not self._stopping:
            try:
                if not await self._ensure_loaded():
                    raise EmbedderUnavailable(self._problem or "the embedding model is not loaded")
                self._step = "apply"
                await self._drain()
                self._clock.caught_up(store="postgres")
                self._health.settled("ready", owner=False)
                backoff = FIRST_BACKOFF_SECONDS
            except Exception as exc:  # a derived index must never take the server down
                if isinstance(exc, vectors_model.ModelMismatch):  # `reindex` switched models meanwhile
                    self._ready, self._problem = False, f"semantic search unavailable: {exc}"
                problem = None if self._ready else self._problem  # searches say their own failures
                self._health.failed(self._step, exc, backoff, problem,
                                    event="vector_sync_failed" if self._ready else "embedder_unavailable")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
                continue
            self._clock.waiting()
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._poll)
            self._wake.clear()

    async def _drain(self) -> None:
        """Apply the outbox until nothing is left for this process, in two overlapping batches:
        one claims and embeds while the other writes its vectors and commits (`EmbeddingTurn`)."""
        async def worker() -> None:
            while (await self._apply_batch()).consumed > 0:
                pass  # (a batch left wholly queued is tried again at the next wake-up, not at once)

        for outcome in await asyncio.gather(worker(), worker(), return_exceptions=True):
            if isinstance(outcome, BaseException):
                raise outcome

    def _embed_for_index(self, texts: list[str], turn: EmbeddingTurn | None = None) -> Any:
        """Called on a database worker thread inside the batch's transaction: the embedding runs
        on the niced indexing thread (one core while writes arrive, both once they pause); the
        next batch may begin as soon as it is done."""
        quiet = time.monotonic() - self._last_write > QUIET_SECONDS
        embedder = self._bulk_embedder if quiet else self._index_embedder
        assert embedder is not None
        # What a retrieve embedded in-line is not embedded again.
        try:
            vectors = self._executor.submit(Reusing(self._fresh, embedder).embed_array, texts).result()
        finally:
            if turn is not None:
                turn.give_back()
        self.embedded += len(texts)
        return vectors

    async def apply_pending(self) -> int:
        """Apply one batch of the outbox (rows other servers hold are skipped); returns how many
        rows it consumed or left queued for a new embedding (0: nothing left for this process)."""
        done = await self._apply_batch()
        return done.consumed + done.deferred

    async def _apply_batch(self) -> vectors_outbox.BatchResult:
        if not await self._ensure_loaded():
            raise EmbedderUnavailable(self._problem or "the embedding model is not loaded")
        # A backlog is applied in bigger batches (`pipeline`: less padding, fewer transactions).
        size, model, clock = self._batch if self._light else max(self._batch, BULK_BATCH), self._model, self._clock
        await self._embedding.acquire()
        turn = EmbeddingTurn(self._embedding, asyncio.get_running_loop())
        mine = IndexingClock()  # this batch's steps (another batch's overlap them)
        started = time.perf_counter()
        try:
            done = await self._db.transact(lambda conn: vectors_outbox.apply_batch(
                conn, size, lambda texts: self._embed_for_index(texts, turn), model, mine))
        finally:
            turn.give_back()
        mine.add("transaction", time.perf_counter() - started - mine.inside())
        self.applied += done.consumed
        self._light = done.consumed + done.deferred < size
        if done.consumed or done.deferred:
            clock.batch_started(at=started)
            clock.merge(mine)
            clock.batch_done(done.consumed, done.embedded)
        return done

    async def backlog(self) -> int:
        return await self._db.read(vectors_outbox.backlog)

    async def rebuild(self) -> None:
        """Drop every vector and queue every entry again, to be embedded by this process's model
        from now on (used by `reindex`; servers loading another model stop applying and searching,
        and say so). Raises RuntimeError when the model cannot be loaded (nothing is dropped then)."""
        if not await self._ensure_loaded(check_model=False):
            raise RuntimeError(self._problem or "the embedding model is not loaded")
        model = self._model
        queued = await self._db.transact(lambda conn: vectors_outbox.requeue_all(conn, model))
        log.info("vector_index_rebuilding", queued=queued, model=model, store="postgres")
        self._ready_now()
        self.notify()
