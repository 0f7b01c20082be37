"""Distillation a developer would sign: the extractive engine on labelled coding-assistant sessions.

    python tests/bench/bench_distill.py [--split dev|test|all] [--verbose] [--corpus FILE]

The corpus (`tests/fixtures/distill_corpus.jsonl`, written by someone who never saw the engine)
holds one session per line: its turns (roles user, assistant, tool), each cut into labelled
sentences, exact substrings of the turn, of kind `fact`, `decision`, `preference`, `rule` (kept)
or `none` (with `why`: question, hypothetical, quote, retracted, negated, one-off request,
narration, assistant filler, code, log, stack trace, tool output, ...), and for a kept one the
1-3 `key` tokens a good memory of it must hold. Odd sessions are `dev` (tune on these), even ones
`test` (look at their misses only to report them).

Each session's turns go, as the `Turn`s reflection gives the engine, through
`extract_with_sources` (limit 100, so the limit never decides), which names the turn and the span
each insight came from. Scoring:

- An insight **covers** a labelled sentence when its span overlaps the sentence in the same turn
  and its content holds every key of the sentence (case-insensitive): a memory that lost the
  port number does not count.
- The insight's kind is its category's: decision -> decision, preference -> preference,
  constraint and instruction -> rule, anything else (profile, fact) -> fact.
- **Restatements.** A kept sentence and the other speaker's restatement of it (same session,
  same kind, one said by the user and one by the assistant, a key in common) are twins: either
  one covered covers both, because a memory of one is a memory of the other (reflection keeps
  one of them; consolidation would merge the second anyway).
- **Recall** of kind K: kept sentences of kind K covered (or whose twin is covered) by an insight
  of kind K; **any kind**: by an insight of any kind.
- **Precision**: insights that cover a kept sentence / all insights. An insight that covers no
  kept sentence is a false positive, counted under the `why` of the labelled sentence it overlaps
  most (or `kept, key lost` when that sentence is kept but the insight lost a key).
- An insight that covers a kept sentence but also holds most of a `none` sentence (a question, a
  retraction...) swallowed it: counted apart, as a warning.

Prints per split (dev, test, all): kept sentences and recall per kind, overall recall and
precision, false positives per negative category; `--verbose` lists every miss and false positive.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from agent_memory.core.model.statements import Turn
from agent_memory.core.sessions.extract import Sourced, extract_with_sources

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "distill_corpus.jsonl"
KINDS = ("fact", "decision", "preference", "rule")
_KIND_OF = {"decision": "decision", "preference": "preference", "constraint": "rule", "instruction": "rule"}
TARGETS = {"recall": 0.8, "precision": 0.85, "kind recall": 0.7}


def kind_of(category: str) -> str:
    """The corpus kind of an insight's category."""
    return _KIND_OF.get(category, "fact")


@dataclass(frozen=True)
class Label:
    session: str
    turn: int
    role: str
    start: int
    end: int
    text: str
    kind: str
    keys: tuple[str, ...]
    why: str

    @property
    def kept(self) -> bool:
        return self.kind != "none"


@dataclass
class Score:
    kept: Counter = field(default_factory=Counter)  # kind -> kept sentences
    strict: Counter = field(default_factory=Counter)  # kind -> covered by an insight of that kind
    loose: Counter = field(default_factory=Counter)  # kind -> covered by an insight of any kind
    confusion: Counter = field(default_factory=Counter)  # (labelled kind, insight kind) -> count
    insights: int = 0
    true: int = 0
    false: Counter = field(default_factory=Counter)  # why -> false positives
    swallowed: Counter = field(default_factory=Counter)  # why -> none sentences held by a true insight
    misses: list[tuple[Label, str]] = field(default_factory=list)
    wrong: list[tuple[str, str, str, str]] = field(default_factory=list)  # session, why, kind, content

    def recall(self, kind: str | None = None, strict: bool = True) -> float:
        hits = self.strict if strict else self.loose
        kinds = KINDS if kind is None else (kind,)
        total = sum(self.kept[k] for k in kinds)
        return sum(hits[k] for k in kinds) / total if total else 0.0

    @property
    def precision(self) -> float:
        return self.true / self.insights if self.insights else 1.0

    def add(self, other: Score) -> None:
        for name in ("kept", "strict", "loose", "confusion", "false", "swallowed"):
            getattr(self, name).update(getattr(other, name))
        self.insights += other.insights
        self.true += other.true
        self.misses += other.misses
        self.wrong += other.wrong


def load(path: Path = CORPUS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def labels(session: dict) -> list[Label]:
    """The session's labelled sentences, located in their turns."""
    out = []
    for index, turn in enumerate(session["turns"]):
        at = 0
        for sentence in turn["sentences"]:
            start = turn["text"].find(sentence["text"], at)
            if start < 0:
                start = turn["text"].find(sentence["text"])
            if start < 0:
                raise ValueError(f"{session['id']} turn {index}: not in the turn: {sentence['text']!r}")
            end = start + len(sentence["text"])
            at = end
            out.append(Label(session["id"], index, turn["role"], start, end, sentence["text"], sentence["kind"],
                             tuple(sentence.get("key") or ()), sentence.get("why") or ""))
    return out


def twins(found: list[Label]) -> dict[Label, list[Label]]:
    """Each kept sentence and its restatements by the other speaker (same kind, a key in common)."""
    kept = [label for label in found if label.kept]
    out: dict[Label, list[Label]] = {label: [label] for label in kept}
    for a in kept:
        for b in kept:
            if a is not b and a.kind == b.kind and {a.role, b.role} == {"user", "assistant"} \
                    and {k.lower() for k in a.keys} & {k.lower() for k in b.keys}:
                out[a].append(b)
    return out


def _overlap(sourced: Sourced, label: Label) -> int:
    if sourced.turn != label.turn:
        return 0
    return max(0, min(sourced.end, label.end) - max(sourced.start, label.start))


def covers(sourced: Sourced, label: Label) -> bool:
    content = sourced.insight.content.lower()
    return label.kept and _overlap(sourced, label) > 0 and all(k.lower() in content for k in label.keys)


def turns_of(session: dict) -> list[Turn]:
    return [Turn(turn["role"], turn["text"]) for turn in session["turns"]]


def score_session(session: dict) -> Score:
    score = Score()
    found = labels(session)
    insights = extract_with_sources(turns_of(session), 100)
    for label, group in twins(found).items():
        score.kept[label.kind] += 1
        covering = [s for s in insights if any(covers(s, twin) for twin in group)]
        kinds = {kind_of(s.insight.category) for s in covering}
        score.strict[label.kind] += label.kind in kinds
        score.loose[label.kind] += bool(kinds)
        score.confusion[(label.kind, label.kind if label.kind in kinds else min(kinds) if kinds else "-")] += 1
        if label.kind not in kinds:
            score.misses.append((label, ", ".join(sorted(kinds)) or "-"))
    for sourced in insights:
        score.insights += 1
        if any(covers(sourced, label) for label in found):
            score.true += 1
            for label in found:
                if not label.kept and _overlap(sourced, label) * 2 > len(label.text):
                    score.swallowed[label.why] += 1
            continue
        near = max(found, key=lambda label: _overlap(sourced, label))
        why = "kept, key lost" if near.kept else near.why or "unlabelled"
        if not _overlap(sourced, near):
            why = "unlabelled"
        score.false[why] += 1
        score.wrong.append((session["id"], why, kind_of(sourced.insight.category), sourced.insight.content))
    return score


def score(sessions: list[dict], split: str = "all") -> Score:
    total = Score()
    for session in sessions:
        if split in ("all", session["split"]):
            total.add(score_session(session))
    return total


def report(name: str, result: Score, verbose: bool = False) -> None:
    kept = sum(result.kept.values())
    print(f"{name}: {kept} kept sentences")
    print(f"  {'kind':<12}{'kept':>6}{'recall':>9}{'any kind':>10}")
    for kind in KINDS:
        print(f"  {kind:<12}{result.kept[kind]:>6}{result.recall(kind):>9.2f}{result.recall(kind, False):>10.2f}")
    print(f"  {'overall':<12}{kept:>6}{result.recall():>9.2f}{result.recall(None, False):>10.2f}")
    print(f"  precision {result.precision:.2f} ({result.true} of {result.insights} insights cover a kept sentence)")
    if result.false:
        print("  false positives: " + ", ".join(f"{why} {n}" for why, n in result.false.most_common()))
    if result.swallowed:
        print("  none sentences held by a true insight: "
              + ", ".join(f"{why} {n}" for why, n in result.swallowed.most_common()))
    if verbose:
        print("  misses (labelled kind, kinds that covered it, sentence):")
        for label, got in result.misses:
            print(f"    {label.session} {label.role:<9} {label.kind:<10} got {got:<10} {label.text!r} "
                  f"{list(label.keys)}")
        print("  false positives (why, kind, content):")
        for session, why, kind, content in result.wrong:
            print(f"    {session} {why:<18} {kind:<10} {content!r}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=("dev", "test", "all"), help="one split only (default: each, then all)")
    parser.add_argument("--verbose", action="store_true", help="list every miss and false positive")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    sessions = load(args.corpus)
    for split in (args.split,) if args.split else ("dev", "test", "all"):
        report(split, score(sessions, split), args.verbose)


if __name__ == "__main__":
    main()
