"""Read-your-writes' in-line embedding (storage/embedding/fresh.py) with the real model: a call's
budget leaves the oldest out (newest first, at least one chunk), the next call goes on where it
stopped, and the indexer takes the vectors already embedded instead of embedding them again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from agent_memory.core.model.models import Entry, Layer, Priority, Scope, Source
from agent_memory.storage.embedding.embedder import OnnxEmbedder, default_model_files
from agent_memory.storage.embedding.fresh import CHUNK, FreshVectors, Reusing

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    return OnnxEmbedder(default_model_files(), threads=1)


class Counting:
    """The real embedder, counting the texts it is given."""

    def __init__(self, embedder: OnnxEmbedder) -> None:
        self.embedder = embedder
        self.texts: list[str] = []

    def embed_array(self, texts: list[str]) -> Any:
        self.texts += texts
        return self.embedder.embed_array(texts)


def entry(n: int, content: str) -> Entry:
    stamp = "2026-11-26T00:00:00Z"
    return Entry(id=f"mem_{n:04d}", scope=Scope.AGENT, namespace="ns", team="red", owner_agent_id="alice",
                 content=content, tags=(), priority=Priority.MEDIUM, source=Source.MANUAL, confidence=1.0,
                 layer=Layer.LONG_TERM, created_at=stamp, updated_at=stamp, expires_at=None, version=1,
                 etag=f"etag{n}", conflict=False, conflict_of=None, session_id=None, promoted_from=None,
                 compacted=False)


async def run_here(fn: Callable[[], Any]) -> Any:
    return fn()


async def test_a_call_covers_the_newest_within_its_budget_and_the_next_goes_on(embedder: OnnxEmbedder) -> None:
    newest_first = [entry(n, f"Survey {n}: a heron was counted near marker {n}.") for n in range(CHUNK * 3, 0, -1)]
    query = embedder.embed(["a heron seen near a survey marker"])[0]
    fresh = FreshVectors(budget_seconds=0.0)  # no time at all: one chunk per call
    counting = Counting(embedder)
    first = await fresh.similarities(query, newest_first, counting.embed_array, run_here)
    assert set(first) == {e.id for e in newest_first[:CHUNK]}  # the newest chunk, the rest left out
    second = await fresh.similarities(query, newest_first, counting.embed_array, run_here)
    assert set(second) == {e.id for e in newest_first[:CHUNK * 2]}  # kept, plus the next chunk
    assert len(counting.texts) == CHUNK * 2  # nothing embedded twice
    everything = await fresh.similarities(query, newest_first, counting.embed_array, run_here, float("inf"))
    assert set(everything) == {e.id for e in newest_first}  # no budget (reflection's comparisons)
    assert first[newest_first[0].id] == pytest.approx(everything[newest_first[0].id])


async def test_the_indexer_takes_the_vectors_embedded_in_line(embedder: OnnxEmbedder) -> None:
    covered = [entry(1, "The intern moved the weekly retro to Thursday afternoons.")]
    fresh = FreshVectors()
    await fresh.similarities(embedder.embed(["retro"])[0], covered, embedder.embed_array, run_here)
    counting = Counting(embedder)
    texts = ["Lunch on Fridays is usually pizza.", covered[0].content, "The staging database restarts at 02:00."]
    vectors = Reusing(fresh, counting).embed_array(texts)
    assert counting.texts == [texts[0], texts[2]]  # the covered one is not embedded again
    assert vectors.shape == (3, embedder.embed_array(texts[:1]).shape[1]) and vectors.dtype == np.float32
    # The same vectors as embedding all three together, up to the int8 model's batch dependence
    # (activations are quantised per batch: the texts beside one move its vector a little).
    assert min(np.sum(vectors * embedder.embed_array(texts), axis=1)) > 0.98
