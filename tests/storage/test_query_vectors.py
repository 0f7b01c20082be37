"""The vector runtime's cache of recent query vectors (same text, same model: same vector)."""

from __future__ import annotations

from agent_memory.storage.chroma.search import StoredAhead
from agent_memory.storage.embedding.queries import QueryVectors


def test_a_query_vector_is_kept_per_model_and_text() -> None:
    cache = QueryVectors(size=2)
    cache.keep("model-a", "where is the build log", [0.1, 0.2])
    assert cache.get("model-a", "where is the build log") == [0.1, 0.2]
    assert cache.get("model-b", "where is the build log") is None  # another model: another space
    assert cache.get("model-a", "where is the build log?") is None


def test_the_least_recently_used_query_goes_first() -> None:
    cache = QueryVectors(size=2)
    cache.keep("m", "one", [1.0])
    cache.keep("m", "two", [2.0])
    assert cache.get("m", "one") == [1.0]  # used: "two" is now the oldest
    cache.keep("m", "three", [3.0])
    assert cache.get("m", "two") is None
    assert cache.get("m", "one") == [1.0] and cache.get("m", "three") == [3.0]


def test_read_ahead_says_which_entries_it_asked_about() -> None:
    ahead = StoredAhead(frozenset({"a", "b"}), {"a": b"\x00\x00"})
    assert "b" in ahead.asked and "b" not in ahead.rows  # asked, not stored: no need to read it again
