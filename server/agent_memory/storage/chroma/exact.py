"""Exact nearest-neighbour search over vectors held in memory, beside Chroma's HNSW index.

Below a few tens of thousands of vectors a partition is searched faster exactly than through the
ANN index (one float32 matrix product with numpy, which releases the GIL, against Chroma's query
path: `tests/bench/bench_exact_vectors.py`), and the answer is exact rather than approximate. So
`ChromaIndex` keeps a mirror of each collection it serves, up to `most_each` vectors per
collection and `most_total` in all, and answers from it; larger collections stay with the index.

A mirror is only ever exact: it is built from the collection's own vectors (in a background
thread, while the index answers), every upsert and delete this process makes to the collection
after the load began is replayed on it, and nothing else writes the collection (a local index
has one owning process; a mirror is never kept for a Chroma server other processes may write).
Thread-safe: the indexing thread writes while the query thread reads.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Change = tuple[str, list[str], Any]  # ("put", ids, vectors) or ("drop", ids, None)


@dataclass(slots=True)
class Matrix:
    """One collection's unit vectors, in rows; `ids[i]` is row i's entry."""

    ids: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    data: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))

    def put(self, ids: Sequence[str], vectors: Any) -> None:
        unit = _unit(np.asarray(vectors, dtype=np.float32))
        if self.data.shape[1] != unit.shape[1] and self.ids:
            raise ValueError("vectors of another dimension")
        new = [n for n, i in enumerate(ids) if i not in self.rows]
        for n, i in enumerate(ids):
            if i in self.rows:
                self.data[self.rows[i]] = unit[n]
        if not new:
            return
        size = len(self.ids)
        if size + len(new) > self.data.shape[0] or self.data.shape[1] != unit.shape[1]:
            # Exactly what a load needs; a quarter more as writes arrive (memory is what limits it).
            rows = size + len(new) if not size else max(size + len(new), size + size // 4, 64)
            grown = np.zeros((rows, unit.shape[1]), dtype=np.float32)
            if size:
                grown[:size] = self.data[:size]
            self.data = grown
        for n in new:
            self.rows[ids[n]] = len(self.ids)
            self.ids.append(ids[n])
        self.data[size:size + len(new)] = unit[new]

    def drop(self, ids: Sequence[str]) -> None:
        """Each id's row gets the last row (order is not kept)."""
        for i in ids:
            row = self.rows.pop(i, None)
            if row is None:
                continue
            last = len(self.ids) - 1
            if row != last:
                moved = self.ids[last]
                self.ids[row] = moved
                self.rows[moved] = row
                self.data[row] = self.data[last]
            self.ids.pop()

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        size = len(self.ids)
        if not size or k <= 0:
            return []
        sims = self.data[:size] @ query
        best = np.argpartition(-sims, k - 1)[:k] if k < size else np.arange(size)
        best = best[np.argsort(-sims[best], kind="stable")]
        return [(self.ids[r], float(sims[r])) for r in best]

    def similarities(self, query: np.ndarray, ids: Sequence[str]) -> list[tuple[str, float]]:
        found = [(i, self.rows[i]) for i in ids if i in self.rows]
        if not found:
            return []
        sims = self.data[[row for _, row in found]] @ query
        return [(i, float(s)) for (i, _), s in zip(found, sims, strict=True)]


class ExactVectors:
    def __init__(self, most_each: int, most_total: int) -> None:
        self.most_each = most_each
        self.most_total = most_total
        self._lock = threading.Lock()
        self._mirrors: dict[str, Matrix] = {}
        # collection -> (its load's ticket, the changes made since that load began)
        self._loading: dict[str, tuple[int, list[Change]]] = {}
        self._too_big: set[str] = set()  # found over the limits (the index answers for them)
        self._tickets = 0  # each load's own: one dropped (`clear`, `forget`) can never finish another

    def nearest(self, name: str, vector: Sequence[float], k: int) -> list[tuple[str, float]] | None:
        """None: no mirror of this collection (yet)."""
        with self._lock:
            matrix = self._mirrors.get(name)
            if matrix is None:
                return None
            return matrix.nearest(_query(vector), k)

    def similarities(self, name: str, vector: Sequence[float], ids: Sequence[str]) -> list[tuple[str, float]] | None:
        with self._lock:
            matrix = self._mirrors.get(name)
            if matrix is None:
                return None
            return matrix.similarities(_query(vector), ids)

    def upserted(self, name: str, ids: list[str], vectors: Any) -> None:
        self._change(name, ("put", list(ids), np.asarray(vectors, dtype=np.float32)))

    def deleted(self, name: str, ids: list[str]) -> None:
        self._change(name, ("drop", list(ids), None))

    def _change(self, name: str, change: Change) -> None:
        with self._lock:
            if name in self._loading:
                self._loading[name][1].append(change)
            matrix = self._mirrors.get(name)
            if matrix is None:
                return
            try:
                _apply(matrix, change)
            except ValueError:  # vectors of another size than the mirror's: the index answers
                del self._mirrors[name]
                return
            if len(matrix) > self.most_each or self._total() > self.most_total:
                del self._mirrors[name]  # grown past the limits: the index answers from now on
                self._too_big.add(name)

    def begin(self, name: str) -> int | None:
        """Whether to load a mirror of `name` now: a ticket for `finish` or `abandon`, which must
        follow; None: not now (held, being loaded, too big, or mirrors are off)."""
        with self._lock:
            if name in self._mirrors or name in self._loading or name in self._too_big or self.most_each <= 0:
                return None
            self._tickets += 1
            self._loading[name] = (self._tickets, [])
            return self._tickets

    def fits(self, count: int) -> bool:
        with self._lock:
            return count <= self.most_each and self._total() + count <= self.most_total

    def finish(self, name: str, ticket: int, ids: list[str], vectors: Any) -> None:
        """The collection's vectors as read after `begin`: the changes made since are replayed on them."""
        matrix = Matrix()
        try:
            if ids:
                matrix.put(ids, vectors)
        except ValueError:
            self.abandon(name, ticket)
            return
        with self._lock:
            if self._loading.get(name, (None,))[0] != ticket:
                return  # dropped meanwhile
            _, changes = self._loading.pop(name)
            try:
                for change in changes:
                    _apply(matrix, change)
            except ValueError:
                return
            if len(matrix) > self.most_each or self._total() + len(matrix) > self.most_total:
                self._too_big.add(name)
                return
            self._mirrors[name] = matrix

    def abandon(self, name: str, ticket: int, *, too_big: bool = False) -> None:
        with self._lock:
            if self._loading.get(name, (None,))[0] != ticket:
                return
            del self._loading[name]
            if too_big:
                self._too_big.add(name)

    def forget(self, name: str) -> None:
        """Drop `name`'s mirror and any load of it under way: a write to the collection failed, and
        may have been applied in part (the next query loads it afresh)."""
        with self._lock:
            self._mirrors.pop(name, None)
            self._loading.pop(name, None)

    def clear(self) -> None:
        """Forget every mirror (the index was reset, closed or replaced); loads under way are dropped."""
        with self._lock:
            self._mirrors.clear()
            self._loading.clear()
            self._too_big.clear()

    def held(self) -> dict[str, int]:
        with self._lock:
            return {name: len(matrix) for name, matrix in self._mirrors.items()}

    def _total(self) -> int:
        return sum(len(m) for m in self._mirrors.values())


def load(exact: ExactVectors, name: str, ticket: int, collection: Any) -> None:
    """Build the mirror of `collection` (Chroma's) named `name` after `begin` gave `ticket`, if it
    fits: run on a thread of its own, while the index answers queries."""
    try:
        if not exact.fits(collection.count()):
            exact.abandon(name, ticket, too_big=True)
            return
        got = collection.get(include=["embeddings"])
        exact.finish(name, ticket, list(got["ids"]), got["embeddings"])
    except Exception:  # the client closed or failed meanwhile: the index goes on answering
        exact.abandon(name, ticket)


def _apply(matrix: Matrix, change: Change) -> None:
    kind, ids, vectors = change
    if kind == "put":
        matrix.put(ids, vectors)
    else:
        matrix.drop(ids)


def _unit(matrix: np.ndarray) -> np.ndarray:
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.clip(norms, 1e-12, None)


def _query(vector: Sequence[float]) -> np.ndarray:
    return _unit(np.asarray(vector, dtype=np.float32))[0]
