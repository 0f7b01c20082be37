"""Indexing on both cores: one batch's runs shared between two one-thread sessions.

One session on two intra-op threads leaves a core idle through every operator onnxruntime runs on
one thread (measured on the bench's texts, batches of 256: 195-220 texts/s, against 220-242/s
for two one-thread sessions each taking every other run). The runs are cut exactly as
`OnnxEmbedder.embed_array` cuts them (`batches`), so each text is embedded beside the same
neighbours either way.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from agent_memory.storage.embedding.embedder import DIMENSIONS, OnnxEmbedder, batches


class SplitEmbedder:
    """`embed_array` on two sessions at once: `first` on the calling thread, `second` on
    `helper` (a thread of the caller's priority: the indexing threads are niced)."""

    def __init__(self, first: OnnxEmbedder, second: OnnxEmbedder, helper: ThreadPoolExecutor) -> None:
        self._first, self._second, self._helper = first, second, helper
        self.name = first.name

    @property
    def space(self) -> str:
        return self._first.space

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: list[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        groups = batches(texts)
        if len(groups) < 2:
            self._first.embed_into(texts, groups, out)
            return out
        # Every other run (by length) to each: both halves take about as long.
        theirs = self._helper.submit(self._second.embed_into, texts, groups[1::2], out)  # disjoint rows
        try:
            self._first.embed_into(texts, groups[0::2], out)
        except BaseException:
            wait([theirs])  # never leave it writing into `out` behind the caller's back
            raise
        theirs.result()
        return out
