"""The stdio transport's pipe reader cuts lines exactly as the text-mode `readline` it replaces."""

from __future__ import annotations

import io
import random

import pytest

from agent_memory.stdio_transport import _Lines

# JSON, every newline form, UTF-8 cut across chunks, bytes that do not decode, a surrogate's bytes.
PIECES = [b'{"a":1}', b"\n", b"\r", b"\r\n", b"\xc3\xa9", b"\xff", b"\xe2\x82", b"\xac", b" ", b"x" * 70,
          b"\xed\xa0\x80"]


def readline_lines(data: bytes) -> list[str]:
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")
    return list(iter(stream.readline, ""))


def split_lines(data: bytes, cuts: list[int]) -> list[str]:
    lines, split, start = [], _Lines(), 0
    for cut in [*cuts, len(data)]:
        lines += split.feed(data[start:cut])
        start = cut
    return lines + split.feed(b"")


@pytest.mark.parametrize("seed", range(300))
def test_any_bytes_in_any_chunks_give_readlines_lines(seed: int) -> None:
    rng = random.Random(seed)
    data = b"".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 40)))
    cuts = sorted(rng.sample(range(len(data) + 1), min(len(data) + 1, rng.randrange(0, 8))))
    assert split_lines(data, cuts) == readline_lines(data)


def test_end_of_input_without_a_last_newline_gives_the_last_line() -> None:
    assert split_lines(b'{"a":1}\n{"b"', [3]) == ['{"a":1}\n', '{"b"']
    assert split_lines(b"", []) == []
