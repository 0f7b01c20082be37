"""Import lines that decode but cannot be stored are refused by line, never a crash."""

from __future__ import annotations

import pytest

from agent_memory.contracts.export_lines import parse_line
from agent_memory.core.model.rules import Limits


@pytest.mark.parametrize(("line", "reason"), [
    ('{"content": "a\\ud800b"}', "lone surrogate"),
    ('{"content": "a\\u0000b"}', "content holds a NUL character"),
    ('{"\\u0000": 1}', "field name .+ holds a NUL character"),
    ('{"content": "caf\udce9"}', "not UTF-8 text"),  # a byte that was not UTF-8, as the reader keeps it
    ("[" * 100_000 + "]" * 100_000, "not JSON"),
    ("not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
])
def test_unstorable_or_unreadable_lines_are_refused_with_a_reason(line: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_line(line, Limits())
