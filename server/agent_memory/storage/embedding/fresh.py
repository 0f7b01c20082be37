"""Read-your-writes by meaning, for both vector runtimes: the entries a retrieve may read that the
vector index has not reached yet are embedded during the call, on the query's thread (at the
request's priority, so a loaded machine that starves the niced indexer does not starve this), the
newest first, for at most `budget_seconds` of embedding per call; whatever that leaves out is
covered by the next calls (the vectors are kept) and is said in `degraded` meanwhile.

The vectors embedded in-line are kept by (id, etag) for later calls, and by text for the indexer
(`Reusing`): an entry embedded here is not embedded again when the outbox reaches it, so the two
share one backlog instead of doing it twice.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from agent_memory.core.model.models import Entry

FRESH_CACHE = 4096  # vectors of not-yet-indexed entries kept between calls
INLINE_SECONDS = 0.5  # embedding per call (the default of `retrieval_inline_embed_ms`)
CHUNK = 16  # texts embedded between two looks at the clock (the embedder's own batch)


class FreshVectors:
    """Vectors of entries embedded during a call because the index has not reached them yet, kept
    by (id, etag) so repeated questions do not embed the same new entries again, and by text for
    the indexer (the oldest go past `size`). Changed on the event loop only; `known` may be called
    from any thread (one dictionary lookup)."""

    def __init__(self, size: int = FRESH_CACHE, budget_seconds: float = INLINE_SECONDS) -> None:
        self._size = size
        self.budget_seconds = budget_seconds
        self._vectors: dict[tuple[str, str], Any] = {}
        self._texts: dict[str, Any] = {}

    def configure(self, budget_seconds: float, most: int) -> None:
        """`budget_seconds` per call; keep at least twice the `most` entries a call may consider,
        so a backlog that large is never evicted while it is being worked through."""
        self.budget_seconds = budget_seconds
        self._size = max(self._size, 2 * most)

    def missing(self, entries: list[Entry]) -> list[Entry]:
        return [e for e in entries if (e.id, e.etag) not in self._vectors]

    def keep(self, entries: list[Entry], rows: Any) -> None:
        for entry, row in zip(entries, rows, strict=False):  # rows may stop short (the budget ran out)
            self._vectors[(entry.id, entry.etag)] = row
            self._texts[entry.content] = row

    def known(self, text: str) -> Any | None:
        """The vector embedded in-line for this text, if still kept."""
        return self._texts.get(text)

    def cosines(self, vector: list[float], entries: list[Entry]) -> dict[str, float]:
        """Each kept entry's cosine to `vector` (entries not kept are left out)."""
        import numpy as np

        kept = [(e.id, row) for e in entries if (row := self._vectors.get((e.id, e.etag))) is not None]
        found: dict[str, float] = {}
        if kept:  # one product for all of them (a backlog may be a thousand)
            sims = np.stack([row for _, row in kept]) @ np.asarray(vector, dtype=np.float32)
            found = {entry_id: float(s) for (entry_id, _), s in zip(kept, sims, strict=True)}
        for kept in (self._vectors, self._texts):  # oldest first, after this call's own are used
            while len(kept) > self._size:
                kept.pop(next(iter(kept)))
        return found

    async def similarities(self, vector: list[float], entries: list[Entry], embed_array: Callable[[list[str]], Any],
                           run: Callable[[Callable[[], Any]], Awaitable[Any]], seconds: float | None = None
                           ) -> dict[str, float]:
        """The cosine to `vector` of each of `entries` (newest first) kept or embedded now by
        `embed_array`, called through `run` (the query thread) for at most `seconds` (default
        `budget_seconds`; infinite: all); entries the budget did not reach are left out."""
        todo = self.missing(entries)
        reused = [(e, row) for e in todo if (row := self.known(e.content)) is not None]
        if reused:  # the same text under another id or etag: the same vector
            self.keep([e for e, _ in reused], [row for _, row in reused])
            todo = self.missing(todo)
        if todo:
            texts = [e.content for e in todo]
            budget = self.budget_seconds if seconds is None else seconds
            self.keep(todo, await run(lambda: embed_within(embed_array, texts, budget)))
        return self.cosines(vector, entries)


def embed_within(embed_array: Callable[[list[str]], Any], texts: list[str], seconds: float) -> list[Any]:
    """Synchronous: the vectors of the first texts, in order, embedded `CHUNK` at a time until
    `seconds` have passed (at least one chunk, so every call moves forward)."""
    rows: list[Any] = []
    deadline = time.monotonic() + seconds
    for start in range(0, len(texts), CHUNK):
        rows.extend(embed_array(texts[start:start + CHUNK]))
        if time.monotonic() >= deadline:
            break
    return rows


class Reusing:
    """The indexer's embedder, taking the vectors already embedded in-line for the same texts and
    embedding only the others (same model, same space: the query and indexing embedders are one
    model on different thread counts)."""

    def __init__(self, fresh: FreshVectors, embedder: Any) -> None:
        self._fresh = fresh
        self._embedder = embedder

    def embed_array(self, texts: list[str]) -> Any:
        import numpy as np

        rows = [self._fresh.known(text) for text in texts]
        todo = [i for i, row in enumerate(rows) if row is None]
        if len(todo) == len(texts):
            return self._embedder.embed_array(texts)
        embedded = self._embedder.embed_array([texts[i] for i in todo]) if todo else []
        for i, row in zip(todo, embedded, strict=True):
            rows[i] = row
        return np.stack(rows).astype(np.float32)
