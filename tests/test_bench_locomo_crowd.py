"""bench_locomo's crowd (`--distractors`): never one of the asked conversation's own turns, as many
as asked, the same each run, and spread between the sessions without reordering or splitting them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
from bench_locomo import distractors, interleave  # noqa: E402


def _conversations(root: Path) -> dict[str, list[str]]:
    texts = {name: [f"{name} says thing {i}. Then more about {i}." for i in range(n)]
             for name, n in (("conv-a", 30), ("conv-b", 20), ("conv-c", 25))}
    for name, lines in texts.items():
        (root / name).mkdir()
        rows = [{"dia_id": f"D1:{i}", "text": text} for i, text in enumerate(lines)]
        (root / name / "memories.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return texts


def test_the_crowd_comes_from_the_other_conversations_only_and_is_the_same_each_run(tmp_path: Path) -> None:
    texts = _conversations(tmp_path)
    few = distractors(tmp_path / "conv-a", 30)
    assert len(few) == 30 and set(few) <= set(texts["conv-b"] + texts["conv-c"])
    many = distractors(tmp_path / "conv-a", 400)
    assert len(many) == 400 and len(set(many)) == 400
    assert set(texts["conv-b"] + texts["conv-c"]) <= set(many)  # every turn first, then joined ones
    assert not any("conv-a" in text for text in many)
    assert many == distractors(tmp_path / "conv-a", 400)


def test_interleaving_keeps_each_session_together_in_order_and_loses_nothing() -> None:
    memories = [{"dia_id": f"D{n}:{i}", "session": n, "text": f"turn {n}.{i}"} for n in range(1, 6) for i in range(10)]
    crowd = [f"other {i}" for i in range(200)]
    mixed = interleave(memories, crowd, "conv-a")
    assert len(mixed) == 250
    assert [m for m in mixed if isinstance(m, dict)] == memories
    assert [m for m in mixed if isinstance(m, str)] == crowd
    places = [i for i, m in enumerate(mixed) if isinstance(m, dict)]
    for n in range(5):  # a session's ten turns are ten places in a row
        assert places[n * 10 + 9] - places[n * 10] == 9
    assert places[-1] - places[0] > 100  # the sessions are spread through the store, not bunched
    assert mixed == interleave(memories, crowd, "conv-a")
