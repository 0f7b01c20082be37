"""Calibrate and report the duplicate / change decision of reflection's consolidation.

    python tests/bench/bench_consolidation.py [--sweep]

On tests/fixtures/consolidation_pairs.jsonl (pairs of an existing statement and a new one,
labelled `same` = a restatement, `changes` = a change of mind about the same subject, `new` = a
related but different statement): each pair goes through `consolidation.judge` with the packaged
embedder's cosine (the server's int8 path) and, separately, with the word-overlap fallback used
while the model is not loaded. Prints precision and recall of the duplicate decision ("same") and
of the change decision ("changes"), and each pair judged wrongly. `--sweep` prints them for a
grid of both thresholds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agent_memory.core import consolidation
from agent_memory.core.consolidation import Candidate, judge
from agent_memory.core.context import word_overlap
from agent_memory.storage.vectors.embedder import OnnxEmbedder, default_model_files

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "consolidation_pairs.jsonl"


def scores(pairs: list[dict], predicted: list[str], label: str) -> tuple[float, float]:
    tp = sum(p["label"] == label and q == label for p, q in zip(pairs, predicted, strict=True))
    said = sum(q == label for q in predicted)
    real = sum(p["label"] == label for p in pairs)
    return (tp / said if said else 1.0), (tp / real if real else 1.0)


def decide(pairs: list[dict], sims: list[float], by_meaning: bool, **thresholds: float) -> list[str]:
    return [judge(p["new"], [Candidate("old", p["old"], s)], by_meaning=by_meaning, **thresholds).relation
            for p, s in zip(pairs, sims, strict=True)]


def report(name: str, pairs: list[dict], predicted: list[str]) -> None:
    for label in ("same", "changes"):
        precision, recall = scores(pairs, predicted, label)
        print(f"  {name:<14} {label:<8} precision {precision:.3f} recall {recall:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    embedder = OnnxEmbedder(default_model_files())
    old = embedder.embed_array([p["old"] for p in pairs])
    new = embedder.embed_array([p["new"] for p in pairs])
    cosines = [float(a @ b) for a, b in zip(old, new, strict=True)]
    overlaps = [word_overlap(p["old"], p["new"]) for p in pairs]
    counts = {label: sum(p["label"] == label for p in pairs) for label in ("same", "changes", "new")}
    print(f"{len(pairs)} pairs ({counts}); thresholds: same meaning {consolidation.SAME_MEANING}, "
          f"same subject {consolidation.SAME_SUBJECT}")
    by_meaning = decide(pairs, cosines, True)
    report("by meaning", pairs, by_meaning)
    report("by words", pairs, decide(pairs, overlaps, False))
    for pair, got, cos in zip(pairs, by_meaning, cosines, strict=True):
        if got != pair["label"]:
            print(f"    wrong ({pair['kind']}, cos {cos:.2f}): {pair['label']} judged {got}: "
                  f"{pair['old']!r} / {pair['new']!r}")
    if args.sweep:
        for same in (0.70, 0.74, 0.78, 0.80, 0.82, 0.85, 0.88):
            for subject in (0.45, 0.5, 0.55, 0.6, 0.65):
                got = decide(pairs, cosines, True, same_meaning=same, same_subject=subject)
                (sp, sr), (cp, cr) = scores(pairs, got, "same"), scores(pairs, got, "changes")
                print(f"  same {same:.2f} subject {subject:.2f}: same P {sp:.3f} R {sr:.3f}; "
                      f"changes P {cp:.3f} R {cr:.3f}")


if __name__ == "__main__":
    main()
