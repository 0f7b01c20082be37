"""Calibrate and report the duplicate / change decision of reflection's consolidation.

    python tests/bench/bench_consolidation.py [--sweep] [--pairs OTHER.jsonl]

On tests/fixtures/consolidation_pairs.jsonl (pairs of an existing statement and a new one,
labelled `same` = a restatement, `changes` = a change of mind about the same subject, `new` = a
related but different statement, often about another subject: server alpha / server bravo,
db-03 / db-07, the Berlin office / the Munich office, the user / the user's partner): each pair
goes through `consolidation.judge` with the packaged embedder's cosine (the server's int8 path)
and, separately, with the word-overlap fallback used while the model is not loaded. Prints, for
both paths, the three rates the product promises:

- unrelated merged: `new` pairs judged `same` or `changes` (a fact reinforced or retired by
  another one: silently wrong; target at most 2 %),
- changes superseded: `changes` pairs judged `changes` (target at least 90 %),
- restatements reinforced: `same` pairs judged `same` (target at least 90 %),

then every pair judged wrongly on each path. `--sweep` prints the rates of the model path for a
grid of both cosine thresholds; `--pairs` measures another pair set of the same format (pairs
written apart from the fixture tell how well the rules carry to phrasing they were not tuned on).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agent_memory.core.sessions import consolidation
from agent_memory.core.sessions.consolidation import Candidate, judge, lexical_similarity
from agent_memory.storage.embedding.embedder import OnnxEmbedder, default_model_files

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "consolidation_pairs.jsonl"
TARGETS = {"unrelated merged": (0.02, "max"), "changes superseded": (0.90, "min"),
           "restatements reinforced": (0.90, "min")}


def decide(pairs: list[dict], sims: list[float], by_meaning: bool, **thresholds: float) -> list[str]:
    return [judge(p["new"], [Candidate("old", p["old"], s)], by_meaning=by_meaning, **thresholds).relation
            for p, s in zip(pairs, sims, strict=True)]


def rates(pairs: list[dict], predicted: list[str]) -> dict[str, tuple[int, int]]:
    """name -> (hits, out of)"""
    def count(label: str, hit: set[str]) -> tuple[int, int]:
        judged = [q for p, q in zip(pairs, predicted, strict=True) if p["label"] == label]
        return sum(q in hit for q in judged), len(judged)
    return {"unrelated merged": count("new", {"same", "changes"}),
            "changes superseded": count("changes", {"changes"}),
            "restatements reinforced": count("same", {"same"})}


def report(name: str, pairs: list[dict], predicted: list[str], sims: list[float]) -> bool:
    met = True
    print(f"{name}:")
    for rate, (hits, total) in rates(pairs, predicted).items():
        target, kind = TARGETS[rate]
        share = hits / total if total else 0.0
        ok = share <= target if kind == "max" else share >= target
        met &= ok
        bound = "<=" if kind == "max" else ">="
        print(f"  {rate:<24} {share:6.1%}  ({hits}/{total}; target {bound} {target:.0%}{'' if ok else ', MISSED'})")
    misses = [(p, q, s) for p, q, s in zip(pairs, predicted, sims, strict=True) if q != p["label"]]
    print(f"  misses ({len(misses)}):")
    for pair, got, sim in misses:
        print(f"    {pair['label']} judged {got} ({pair['kind']}, sim {sim:.2f}): {pair['old']!r} / {pair['new']!r}")
    return met


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--pairs", type=Path, default=FIXTURE, help="another labelled pair set (same format)")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in args.pairs.read_text().splitlines() if line.strip()]
    embedder = OnnxEmbedder(default_model_files())
    old = embedder.embed_array([p["old"] for p in pairs])
    new = embedder.embed_array([p["new"] for p in pairs])
    cosines = [float(a @ b) for a, b in zip(old, new, strict=True)]
    overlaps = [lexical_similarity(p["old"], p["new"]) for p in pairs]
    counts = {label: sum(p["label"] == label for p in pairs) for label in ("same", "changes", "new")}
    print(f"{len(pairs)} pairs ({counts}); thresholds: same meaning {consolidation.SAME_MEANING}, "
          f"same subject {consolidation.SAME_SUBJECT}")
    report("by meaning (embedder cosine)", pairs, decide(pairs, cosines, True), cosines)
    report("by words (lexical fallback, no model)", pairs, decide(pairs, overlaps, False), overlaps)
    if args.sweep:
        for same in (0.70, 0.74, 0.78, 0.80, 0.82, 0.85, 0.88):
            for subject in (0.45, 0.5, 0.55, 0.6, 0.65):
                got = rates(pairs, decide(pairs, cosines, True, same_meaning=same, same_subject=subject))
                print(f"  same {same:.2f} subject {subject:.2f}: "
                      + "; ".join(f"{k} {h / t:.1%}" for k, (h, t) in got.items()))


if __name__ == "__main__":
    main()
