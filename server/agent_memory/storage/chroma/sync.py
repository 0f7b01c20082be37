"""The background task of `VectorRuntime`: keeps the vector index in step with SQLite through the
outbox, and repairs it. It can never die silently: any failure of any step (load, check, repair,
apply) is logged when it happens, said in `degraded` and `stats`, and retried with backoff."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar

import structlog

from agent_memory.storage.chroma.chroma_index import ChromaIndex
from agent_memory.storage.chroma.owner_link import OwnerLink
from agent_memory.storage.chroma.ownership import OwnedElsewhere
from agent_memory.storage.embedding import health
from agent_memory.storage.embedding.embedder import EmbedderUnavailable
from agent_memory.storage.embedding.health import TaskHealth
from agent_memory.storage.embedding.indexing_clock import IndexingClock
from agent_memory.storage.embedding.task import VectorTask
from agent_memory.storage.failures import STORAGE_FULL, storage_reason

T = TypeVar("T")
POLL_SECONDS = 1.0  # other processes' writes are noticed within this
FIRST_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 10.0
REBUILD_AFTER_FAILURES = 3

log = structlog.get_logger("agent_memory.vectors")


class IndexInconsistent(RuntimeError):
    """The index holds fewer vectors than SQLite says it should: it is rebuilt."""


class VectorSync(VectorTask):
    """Base of `VectorRuntime`, which owns the state below and provides the index operations."""

    _index: ChromaIndex
    _index_open: bool
    _problem: str | None
    _wake: asyncio.Event
    _stopping: bool
    _tasks: list[asyncio.Task[None]]
    _failures: int  # failures of the index itself (not of SQLite): a repair after a few
    _repair_due: bool
    _rebuilding: bool
    _step: str  # what the task is doing: load, check, repair or apply
    _health: TaskHealth
    _clock: IndexingClock
    _cleanup: asyncio.Future[int] | None
    _link: OwnerLink | None

    async def _call(self, fn: Callable[..., T], *args: Any) -> T: ...
    async def _open(self) -> bool: ...
    async def _release(self) -> None: ...
    async def _requeue_all(self) -> None: ...
    async def apply_pending(self) -> int: ...

    def start(self) -> None:
        self._start_task(self._run)
        self._health.save()

    def free_space(self) -> None:
        """The disk is full: delete set-aside index directories now (never needed)."""
        directory = self._index.directory
        if directory is None or not self._index.local or (self._cleanup is not None and not self._cleanup.done()):
            return
        if not health.set_aside_dirs(directory):
            return
        self._cleanup = asyncio.get_running_loop().run_in_executor(None, health.remove_set_aside, directory)
        self._cleanup.add_done_callback(lambda done: log.warning("vector_set_aside_removed", directories=done.result(),
                                                                 cause="storage_full"))

    # -- outbox applier ---------------------------------------------------------------------

    async def _run(self) -> None:
        """Load the model and index, then keep applying the outbox. Any failure of any step is
        logged when it happens, said in `degraded` (and `stats`), and retried with backoff;
        writes keep landing in SQLite and the outbox meanwhile."""
        backoff = FIRST_BACKOFF_SECONDS
        while not self._stopping:
            try:
                if self._repair_due and self._index.local:
                    await self._repair()
                if await self._open():
                    self._step = "apply"
                    while await self.apply_pending() > 0:
                        pass
                    self._clock.caught_up(store="sqlite")
                    await self._caught_up()
                elif self._link is None:
                    raise RuntimeError(self._problem or "vector index unavailable")
                else:
                    self._health.settled("following", owner=False)
                backoff = FIRST_BACKOFF_SECONDS
            except IndexInconsistent:
                continue  # logged; repaired at once, at the top of the loop
            except Exception as exc:  # a derived index must never take the server down
                self._failed(exc, backoff)
                if self._repair_due and self._index.local and storage_reason(exc) is None \
                        and self._step != "repair":
                    continue  # repaired at once, at the top of the loop
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
                continue
            self._clock.waiting()
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)
            self._wake.clear()

    def _failed(self, exc: Exception, retry_in: float) -> None:
        step, reason = self._step, storage_reason(exc)
        if reason == STORAGE_FULL:
            self.free_space()
        if isinstance(exc, EmbedderUnavailable):
            self._problem = f"semantic search unavailable: {exc}"
            self._health.failed(step, exc, retry_in, self._problem, event="embedder_unavailable")
            return
        if step in ("check", "apply") and reason is None and self._index_open:  # the index itself fails
            self._index_open = False  # reopened on the next attempt
            self._failures += 1
            self._repair_due = self._repair_due or (self._index.local and self._failures >= REBUILD_AFTER_FAILURES)
        if step != "apply" or not self._index_open or self._rebuilding:
            self._problem = health.problem_text(step, exc)
        self._health.failed(step, exc, retry_in, self._problem)

    async def _caught_up(self) -> None:
        self._failures = 0
        if self._rebuilding:
            self._rebuilding = False
            log.info("vector_index_rebuilt")
            if self._index.directory is not None:  # the rebuild caught up: set-aside copies go
                removed = await self._call(health.remove_set_aside, self._index.directory)
                if removed:
                    log.info("vector_set_aside_removed", directories=removed, cause="rebuilt")
        self._problem = None
        self._health.settled("ready", owner=self._index.local)

    async def _repair(self) -> None:
        """The local index keeps failing: rebuild it from SQLite (retrieval is keyword-only, and
        says so, until the rebuild has caught up). SQLite first: if it refuses the requeue (a full
        disk, a busy database), nothing has changed and the lock is given up until the retry, so
        another process can take over meanwhile."""
        self._step = "repair"
        self._index_open = False  # searches wait for the rebuilt index
        self._problem = "semantic search unavailable: rebuilding the vector index from SQLite"
        try:
            await self._call(self._index.take_ownership)
        except OwnedElsewhere:
            await self._release()
            self._repair_due = False  # it is the owner's now
            return
        try:
            await self._requeue_all()
        except Exception:
            await self._release()
            raise
        assert self._index.directory is not None
        await self._call(health.remove_set_aside, self._index.directory)  # at most one is kept
        aside = await self._call(self._index.discard)
        log.error("vector_index_rebuilding", set_aside=str(aside) if aside else None)
        self._failures = 0
        self._repair_due = False
        self._rebuilding = True
        self._health.settled("rebuilding", owner=True, problem=self._problem)
