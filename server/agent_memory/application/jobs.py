"""Background work of a running server: reflection of sessions with new turns, pruning on a
schedule, and pruning of namespaces that just grew. Each job survives its own failures (logged,
retried next period) and stops cleanly at shutdown."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from contextlib import suppress

import anyio
import structlog

from agent_memory.core.memories.pruning import PruneService
from agent_memory.core.sessions.reflection import ReflectionService

AFTER_WRITE_DELAY_SECONDS = 1.0  # namespaces that grew are looked at together, at most once a second

log = structlog.get_logger("agent_memory.jobs")


class BackgroundJobs:
    def __init__(self, *, reflection_interval: float, prune_interval: float) -> None:
        self.pruner: PruneService | None = None  # set by `start` (its keeper needs the session store,
        # which tells these jobs what grew)
        self._reflection: ReflectionService | None = None
        self._reflection_interval = reflection_interval
        self._prune_interval = prune_interval
        self._grown: set[tuple[str, str]] = set()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self, reflection: ReflectionService, pruner: PruneService,
              metrics: Callable[[], dict[str, object]] | None = None, metrics_interval: float = 60.0) -> None:
        self._reflection = reflection
        self.pruner = pruner

        def spawn(name: str, job: Callable[[], Awaitable[None]]) -> None:
            # A fresh context: no request's log fields leak into background work.
            self._tasks.append(asyncio.create_task(job(), name=name, context=contextvars.Context()))

        if self._reflection_interval > 0:
            spawn("reflection", lambda: self._every(self._reflection_interval, self.reflect_once))
        if self._prune_interval > 0:
            spawn("pruning", lambda: self._every(self._prune_interval, self.prune_once))
        spawn("pruning-after-writes", self._after_writes)
        if metrics is not None:
            async def log_metrics() -> int:
                log.info("metrics", **metrics())
                return 0

            spawn("metrics-log", lambda: self._every(metrics_interval, log_metrics))

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            for task in self._tasks:
                task.cancel()
            for task in self._tasks:
                with suppress(asyncio.CancelledError):
                    await task
        self._tasks.clear()

    def inserted(self, partitions: set[tuple[str, str]]) -> None:
        """Repository hook: entries were inserted into these (scope, namespace)s."""
        self._grown |= partitions
        self._wake.set()

    async def reflect_once(self) -> int:
        if self._reflection is None:
            return 0
        done = await self._reflection.reflect_pending()
        if done:
            log.info("background_reflection", sessions=done)
        return done

    async def prune_once(self, partitions: list[tuple[str, str]] | None = None) -> int:
        if self.pruner is None:
            return 0
        deleted = await self.pruner.prune(partitions, retention=partitions is None)
        if deleted:
            reasons: dict[str, int] = {}
            for victim in deleted:
                reasons[victim.reason] = reasons.get(victim.reason, 0) + 1
            log.info("pruned", deleted=len(deleted), **reasons)
        return len(deleted)

    async def _every(self, period: float, job: Callable[[], Awaitable[int]]) -> None:
        while True:
            await asyncio.sleep(period)
            try:
                await job()
            except Exception as exc:  # never let a background job take the server down
                log.warning("background_job_failed", job=job.__name__, error=type(exc).__name__)

    async def _after_writes(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(AFTER_WRITE_DELAY_SECONDS)
            self._wake.clear()
            grown, self._grown = sorted(self._grown), set()
            try:
                await self.prune_once(grown)
            except Exception as exc:
                log.warning("background_job_failed", job="prune_after_writes", error=type(exc).__name__)
