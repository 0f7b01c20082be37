"""Where the background indexer's time goes (both stores): cumulative wall-clock seconds per step,
logged as `vector_indexing_caught_up` each time the outbox has been emptied after some work (and
as `vector_indexing_progress` every `PROGRESS_ROWS` rows of a long backlog), so a
benchmark (tests/bench/bench_retrieve.py) can set them beside the embedder's own throughput.

Steps: `read` (outbox rows and their entries), `embed` (the model), `index` (Chroma's delete and
upsert, or pgvector's insert), `forget` (the outbox rows deleted and SQLite's vector copies
written, in one transaction), `transaction` (PostgreSQL: begin, commit and waiting for a
connection, i.e. the batch's transaction less the steps inside it), `wake` (from a write's
`notify` to the first batch that follows)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import structlog

log = structlog.get_logger("agent_memory.vectors")
PROGRESS_ROWS = 10_000
STEPS = ("read", "embed", "index", "forget", "transaction", "wake")


class IndexingClock:
    """Cheap (a perf_counter pair per step and batch); used on the event loop and the indexing
    thread, never at once for the same step."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(STEPS, 0.0)
        self.batches = 0
        self.rows = 0  # outbox rows consumed
        self.embedded = 0  # texts embedded
        self.busy = 0.0  # wall seconds from the first batch of a catch-up to its end, summed
        self._idle_since: float | None = None  # the indexer waits for work
        self._since_wake: float | None = None  # a write woke the waiting indexer
        self._pass_start: float | None = None
        self._logged = 0  # rows when progress was last logged

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - start

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] += seconds

    def merge(self, other: IndexingClock) -> None:
        """Add another clock's step totals (one batch's, timed on its own)."""
        for name, value in other.seconds.items():
            self.seconds[name] += value

    def inside(self) -> float:
        """Seconds of the steps a transaction holds (for `transaction`: the rest of it)."""
        return sum(self.seconds[name] for name in ("read", "embed", "index", "forget"))

    def lap(self, name: str, since: float) -> float:
        """Add the time since `since` (a perf_counter) to `name`; returns now."""
        now = time.perf_counter()
        self.seconds[name] += now - since
        return now

    def waiting(self) -> None:
        """The indexer has nothing to do and waits for a write's `notify` (or its poll)."""
        self._idle_since = time.perf_counter()

    def notified(self) -> None:
        """A write queued work: while the indexer waits, the time until its next batch is `wake`."""
        if self._idle_since is not None and self._since_wake is None:
            self._since_wake = time.perf_counter()

    def batch_started(self, at: float | None = None) -> None:
        now = time.perf_counter() if at is None else at
        if self._since_wake is not None:
            self.seconds["wake"] += now - self._since_wake
            self._since_wake = None
        self._idle_since = None
        if self._pass_start is None:
            self._pass_start = now

    def batch_done(self, rows: int, embedded: int) -> None:
        self.batches += 1
        self.rows += rows
        self.embedded += embedded
        if self.rows >= self._logged + PROGRESS_ROWS:  # a long backlog says how it is going
            self._logged = self.rows
            log.info("vector_indexing_progress", **self.fields(), pass_s=round(self._pass_seconds(), 3))

    def _pass_seconds(self) -> float:
        return 0.0 if self._pass_start is None else time.perf_counter() - self._pass_start

    def caught_up(self, **fields: Any) -> None:
        """The outbox is empty (for this process): log the totals if this pass did any work."""
        if self._pass_start is None:
            return
        self.busy += time.perf_counter() - self._pass_start
        self._pass_start = None
        log.info("vector_indexing_caught_up", **self.fields(), **fields)

    def fields(self) -> dict[str, Any]:
        return {"batches": self.batches, "rows": self.rows, "embedded": self.embedded,
                "busy_s": round(self.busy, 3),
                "seconds": {name: round(value, 3) for name, value in self.seconds.items()}}
