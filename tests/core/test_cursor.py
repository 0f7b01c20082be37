from __future__ import annotations

import pytest

from agent_memory.core.model.cursor import CursorCodec, Position, query_binding
from agent_memory.core.model.errors import InvalidParams

CODEC = CursorCodec(b"k" * 32)
BINDING = query_binding("alice", "red", "agent", "alice", {})


def test_cursor_round_trips_its_position() -> None:
    position = Position("2026-01-01T00:00:00.000000Z", "mem_1")
    assert CODEC.decode(CODEC.encode(position, BINDING), BINDING) == position


@pytest.mark.parametrize("cursor", ["", "x", "a.b.c", "!!!.???", "eyJ9.AAAA", "bm90IGpzb24.AAAA"])
def test_malformed_cursor_is_invalid_params(cursor: str) -> None:
    with pytest.raises(InvalidParams):
        CODEC.decode(cursor, BINDING)


def test_cursor_from_another_secret_is_refused() -> None:
    cursor = CursorCodec(b"other" * 8).encode(Position("t", "i"), BINDING)
    with pytest.raises(InvalidParams, match="not valid"):
        CODEC.decode(cursor, BINDING)


def test_cursor_bound_to_other_query_is_refused() -> None:
    cursor = CODEC.encode(Position("t", "i"), BINDING)
    with pytest.raises(InvalidParams, match="another query"):
        CODEC.decode(cursor, query_binding("alice", "red", "agent", "alice", {"layer": "meta"}))
