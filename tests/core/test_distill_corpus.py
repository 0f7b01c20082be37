"""The extractive engine on the labelled corpus of coding-assistant sessions, scored as
`tests/bench/bench_distill.py` scores it: each split holds (a little under) the figures the engine
reaches, so a real regression fails here while the figures themselves are read from the bench."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_distill import KINDS, Score, load, score  # noqa: E402

# split -> (overall recall, precision, recall per kind); reached: see docs/benchmarks.md.
FLOORS = {
    "dev": (0.93, 0.95, {"fact": 0.92, "decision": 0.94, "preference": 0.92, "rule": 0.91}),
    "test": (0.69, 0.86, {"fact": 0.72, "decision": 0.60, "preference": 0.74, "rule": 0.62}),
}


@pytest.fixture(scope="module")
def scores() -> dict[str, Score]:
    sessions = load()
    return {split: score(sessions, split) for split in FLOORS}


@pytest.mark.parametrize("split", list(FLOORS))
def test_the_engine_keeps_what_matters_in_each_split_and_little_else(scores: dict[str, Score], split: str) -> None:
    result = scores[split]
    recall, precision, per_kind = FLOORS[split]
    assert result.recall() >= recall, (split, result.recall())
    assert result.precision >= precision, (split, result.precision, result.false)
    for kind in KINDS:
        assert result.recall(kind) >= per_kind[kind], (split, kind, result.recall(kind))


def test_the_corpus_is_the_one_the_floors_were_measured_on(scores: dict[str, Score]) -> None:
    assert {split: sum(s.kept.values()) for split, s in scores.items()} == {"dev": 239, "test": 246}
