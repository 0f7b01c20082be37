"""What both stores' vector runtimes share of their background task's life: the threads it embeds
and searches on, starting it, how it ended, waking it after a write, the embedders it loads and
stopping it. Each runtime adds what its store needs (the Chroma index's owner and lock, the
PostgreSQL outbox's two batches)."""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from typing import Any

import structlog

from agent_memory.storage.embedding.embedder import ModelFiles, OnnxEmbedder
from agent_memory.storage.embedding.health import TaskHealth
from agent_memory.storage.embedding.indexing_clock import IndexingClock
from agent_memory.storage.embedding.queries import LOADING
from agent_memory.storage.embedding.split import SplitEmbedder

STOPPED = "semantic search unavailable: the background vector task stopped; restart the server"

log = structlog.get_logger("agent_memory.vectors")


def lower_thread_priority() -> None:
    """Indexing is background work: on Linux a thread has its own nice value, so requests (and
    the query thread) win the CPU whenever both want it."""
    with suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


def background_executor(name: str) -> ThreadPoolExecutor:
    """One niced thread (the indexing thread, and SQLite's embedding thread beside it)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix=name, initializer=lower_thread_priority)


class VectorTask:
    """Base of both vector runtimes: call `_init_task` first thing in `__init__`."""

    _health: TaskHealth

    def _init_task(self) -> None:
        self._executor = background_executor("vectors")
        self._split_executor = background_executor("vectors-split")  # `SplitEmbedder`'s second session
        # Queries get their own thread (at the request's priority): never behind an indexing batch.
        self._query_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vector-queries")
        self._embedder: OnnxEmbedder | None = None  # queries: one core
        self._index_embedder: OnnxEmbedder | None = None  # indexing while writes arrive: one core
        self._bulk_embedder: OnnxEmbedder | SplitEmbedder | None = None  # indexing once writes pause: both cores
        self._problem: str | None = LOADING
        self._last_write = 0.0
        self._wake = asyncio.Event()
        self._stopping = False
        self._tasks: list[asyncio.Task[None]] = []
        self._clock = IndexingClock()  # where indexing time goes (logged when caught up)

    def _threads(self) -> list[ThreadPoolExecutor]:
        return [self._executor, self._split_executor, self._query_executor]

    def _load_embedders(self, files: ModelFiles) -> None:
        """Called on the niced indexing thread, so the indexing sessions' threads run niced too.
        Indexing runs on one core while writes arrive (a burst of writes never takes the CPU that
        requests need) and on both once they pause, as two one-thread sessions (`split.py`). A
        query (one short text) uses one: measured, a second thread makes it slower (3.7 against
        2.6 ms: waking a thread that may not spin costs more than it saves on a dozen tokens), and
        it leaves the other core to the keyword search."""
        self._index_embedder = OnnxEmbedder(files, threads=1)
        self._bulk_embedder = SplitEmbedder(self._index_embedder, self._index_embedder.with_threads(1),
                                            self._split_executor)
        self._embedder = self._index_embedder.with_threads(1)

    def _start_task(self, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        # A fresh context: the task must not carry the log fields of the request that started it.
        task = asyncio.create_task(run(), name="vector-sync", context=contextvars.Context())
        task.add_done_callback(self._ended)
        self._tasks.append(task)

    def _ended(self, task: asyncio.Task[None]) -> None:
        """The task only ends at shutdown; anything else is said loudly, here and in `degraded`."""
        error = None if task.cancelled() else task.exception()  # (retrieved: never "never retrieved")
        if self._stopping:
            return
        reason = "cancelled" if task.cancelled() else type(error).__name__ if error else "returned"
        log.error("vector_task_ended", reason=reason)
        self._problem = STOPPED
        self._health.stopped(reason, self._problem)

    async def _stop_task(self) -> None:
        """Cancel the task and wait for it (call inside a shielded scope): a batch in flight
        finishes or rolls back first. Never raises: how the task ended is `_ended`'s business."""
        self._stopping = True
        self._wake.set()
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks)

    def _shutdown_threads(self, *, wait: bool = True) -> None:
        for executor in self._threads():
            executor.shutdown(wait=wait, cancel_futures=not wait)

    def notify(self) -> None:
        """A write queued vector changes: apply them soon."""
        self._last_write = time.monotonic()
        self._clock.notified()
        self._wake.set()

    @property
    def problem(self) -> str | None:
        """None when semantic search works, else why not (for `degraded`)."""
        return self._problem
