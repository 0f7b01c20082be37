"""Exact search from vectors held in memory (`storage/chroma/exact.py`), alone and inside a real
Chroma `PersistentClient` index: the same neighbours as a brute-force cosine, kept exact through
upserts and deletes, including those made while a mirror loads, and left to the HNSW index past
its limits."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from agent_memory.storage.chroma.chroma_index import ChromaIndex, collection_name
from agent_memory.storage.chroma.exact import ExactVectors, Matrix

DIM = 16


def vectors(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)


def brute(ids: list[str], matrix: np.ndarray, query: np.ndarray, k: int) -> list[str]:
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    sims = unit @ (query / np.linalg.norm(query))
    return [ids[i] for i in np.argsort(-sims, kind="stable")[:k]]


def test_a_matrix_finds_the_same_neighbours_as_brute_force_through_puts_and_drops() -> None:
    data = vectors(300, 1)
    ids = [f"e{i}" for i in range(300)]
    matrix = Matrix()
    matrix.put(ids[:200], data[:200])
    matrix.put(ids[200:], data[200:])  # grows
    matrix.drop(ids[:50] + ["never-there"])
    matrix.put(ids[60:70], data[60:70] * -1)  # replaced in place
    expected = data.copy()
    expected[60:70] *= -1
    query = vectors(1, 2)[0]
    query /= np.linalg.norm(query)  # a matrix takes unit queries (ExactVectors makes them)
    found = matrix.nearest(query, 10)
    assert [i for i, _ in found] == brute(ids[50:], expected[50:], query, 10)
    assert found[0][1] == pytest.approx(float(np.max(expected[50:] @ query / np.linalg.norm(expected[50:], axis=1))),
                                  abs=1e-5)
    assert len(matrix) == 250 and matrix.nearest(query, 1000)[-1][0] in ids
    assert len(matrix.nearest(query, 1000)) == 250
    assert {i for i, _ in matrix.similarities(query, ["e10", "e100", "e299"])} == {"e100", "e299"}


def test_changes_made_while_a_mirror_loads_are_replayed_on_what_the_load_read() -> None:
    exact = ExactVectors(most_each=1000, most_total=1000)
    data = vectors(20, 3)
    ids = [f"e{i}" for i in range(20)]
    ticket = exact.begin("c")
    assert ticket is not None and exact.begin("c") is None  # one load at a time
    exact.deleted("c", ["e0", "e1"])  # made after the load began; the load's read may miss them
    exact.upserted("c", ["e2"], data[[19]])
    exact.upserted("c", ["new"], data[[18]])
    assert exact.nearest("c", data[0], 5) is None  # not held until loaded
    exact.finish("c", ticket, ids, data)  # a read from before those changes
    held = dict(exact.nearest("c", data[19], 30) or [])
    assert set(held) == set(ids[2:]) | {"new"}
    assert held["e2"] == pytest.approx(1.0, abs=1e-5)


def test_a_load_from_before_a_clear_is_dropped_and_limits_hand_collections_to_the_index() -> None:
    exact = ExactVectors(most_each=10, most_total=15)
    data = vectors(12, 4)
    ticket = exact.begin("old")
    assert ticket is not None
    exact.clear()  # the index was reset meanwhile
    exact.finish("old", ticket, ["a"], data[:1])
    assert exact.nearest("old", data[0], 1) is None
    ticket = exact.begin("big")
    assert ticket is not None
    exact.finish("big", ticket, [f"b{i}" for i in range(11)], data[:11])  # over most_each
    assert exact.nearest("big", data[0], 1) is None and exact.begin("big") is None
    ticket = exact.begin("one")
    assert ticket is not None
    exact.finish("one", ticket, [f"o{i}" for i in range(9)], data[:9])
    exact.upserted("one", ["o9", "o10"], data[9:11])  # grows past most_each: the index answers
    assert exact.nearest("one", data[0], 1) is None
    assert exact.held() == {}


@contextmanager
def filled(tmp_path: Path, size: int, seed: int, exact_max: int) -> Iterator[tuple[ChromaIndex, str, np.ndarray,
                                                                               list[str]]]:
    """A real local index holding one collection of `size` vectors: (index, its name, vectors, ids)."""
    index = ChromaIndex(tmp_path / "chroma", exact_max=exact_max, exact_total=1000)
    index.open()
    try:
        name = collection_name("agent:a", "default")
        data = vectors(size, seed)
        ids = [f"e{i}" for i in range(size)]
        index.upsert(name, ids, data.tolist(), [{"n": i} for i in range(size)])
        yield index, name, data, ids
    finally:
        index.close()


def mirrored(index: ChromaIndex, name: str, size: int) -> None:
    deadline = time.monotonic() + 30
    while index.exact.held().get(name) != size:
        assert time.monotonic() < deadline, index.exact.held()
        time.sleep(0.02)


def test_a_chroma_index_answers_exactly_from_its_mirror_and_keeps_it_with_every_write(tmp_path: Path) -> None:
    with filled(tmp_path, 400, 5, exact_max=1000) as (index, name, data, ids):
        query = vectors(1, 6)[0]
        first = index.query([name], query.tolist(), 10)  # from the HNSW index; the mirror loads beside
        mirrored(index, name, 400)
        assert [i for i, _ in index.query([name], query.tolist(), 10)] == brute(ids, data, query, 10)
        assert {i for i, _ in first} <= set(ids)
        index.delete(name, ids[:100])
        index.upsert(name, ["late"], [query.tolist()], [{"n": -1}])
        found = index.query([name], query.tolist(), 10)
        assert found[0] == ("late", pytest.approx(1.0, abs=1e-5))
        assert [i for i, _ in found[1:]] == brute(ids[100:], data[100:], query, 9)
        sims = dict(index.similarities([name], query.tolist(), ["late", "e0", "e200"]))
        assert set(sims) == {"late", "e200"}
        index.reset()
        assert index.exact.held() == {}


def test_a_collection_past_the_limit_is_searched_through_the_index(tmp_path: Path) -> None:
    with filled(tmp_path, 80, 7, exact_max=50) as (index, name, data, ids):
        query = vectors(1, 8)[0]
        assert len(index.query([name], query.tolist(), 5)) == 5  # the index; a mirror's load is tried beside
        for loader in index._loaders:
            loader.join(timeout=30)
        assert index.exact.held() == {} and index.exact.begin(name) is None  # found too big: never again
        assert len(index.query([name], query.tolist(), 5)) == 5


def test_a_chroma_server_index_never_mirrors() -> None:
    assert ChromaIndex(host="chroma.internal", exact_max=1000, exact_total=1000).exact.begin("x") is None


def test_a_forgotten_load_never_finishes_a_newer_one() -> None:
    exact = ExactVectors(most_each=100, most_total=100)
    data = vectors(3, 9)
    old = exact.begin("c")
    assert old is not None
    exact.forget("c")  # a write failed, maybe in part
    new = exact.begin("c")
    assert new is not None and new != old
    exact.upserted("c", ["b"], data[[1]])
    exact.finish("c", old, ["stale"], data[[0]])  # the older read: dropped
    assert exact.nearest("c", data[0], 5) is None
    exact.finish("c", new, ["a"], data[[2]])
    assert {i for i, _ in exact.nearest("c", data[0], 5) or []} == {"a", "b"}


def test_a_failed_write_drops_the_mirror_and_no_load_begins_for_a_closed_client(tmp_path: Path) -> None:
    with filled(tmp_path, 50, 10, exact_max=1000) as (index, name, data, ids):
        index.query([name], data[0].tolist(), 5)
        mirrored(index, name, 50)
        with pytest.raises(Exception):  # noqa: B017 - Chroma's error type varies by version
            index.upsert(name, ["bad"], [[1.0, 2.0]], [{"n": -1}])  # the wrong dimension
        assert name not in index.exact.held()
        collection = index._collection(name, create=False)
        epoch = index._epoch
        index.close_client()  # a query thread that read `epoch` before this must not load
        index._mirror(name, collection, epoch)
        assert index.exact.begin(name) is not None  # nothing was loading it
        index.open()  # and a reopened index starts with no mirror
        assert index.exact.held() == {}
        assert [i for i, _ in index.query([name], data[3].tolist(), 1)] == ["e3"]
