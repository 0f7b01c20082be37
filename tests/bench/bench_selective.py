"""Selective recall on LoCoMo dev: on-topic recall@10 and injected characters next to the
off-topic false-injection rate, before and after the relative floor.

    python tests/bench/bench_selective.py [--data ../shared/data/locomo/dev] [--min-score 0.45]
                                          [--relative-floor 0.6] [--sweep]

Each conversation's agent gets a fresh store holding its own turns (as in bench_locomo.py). It is
asked its own questions (on-topic: recall@10 against the evidence turns, and the characters of the
context injected) and the next conversation's questions (off-topic: people and events it never
stored; the false-injection rate is the share that return at least one item). Every question is
asked twice, side by side: with the relative floor off (`relative_floor: 0`, the behaviour before
it existed) and with the one tested (default: the server's retrieval_relative_floor); both with the
same `min_score`.

`--sweep` prints two curves. Relative floors: computed from the answers with the floor off (the
relative floor keeps the best-first prefix whose scores reach that share of the first; exact up to
the 4-decimal rounding of the scores), with the target (injected characters on-topic down by a
third or more, recall@10 down by 0.01 at most) and the knee. Absolute floors (`min_score`, a
query-level gate on score_parts.match): from each question asked once more with both floors off.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from agent_memory.config import load_settings
from agent_memory.logging import configure_logging
from agent_memory.tools.server import create_server

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_locomo import read_jsonl  # noqa: E402
from locomo_data import locomo_dir  # noqa: E402

SWEEP = [0.0, 0.3, 0.35, 0.4, 0.42, 0.44, 0.45, 0.46, 0.48, 0.5, 0.55]
RELATIVE_SWEEP = [0.0, 0.3, 0.4, 0.5, 0.52, 0.54, 0.56, 0.58, 0.6, 0.62, 0.64, 0.66, 0.68, 0.7, 0.75, 0.8, 0.9]
TARGET_CHARS, TARGET_RECALL = -1 / 3, -0.01  # injected characters on-topic down a third, recall@10 down 0.01 at most


async def ask(client: Client, question: str, min_score: float, relative_floor: float) -> dict:
    answer = await client.call_tool("memory_retrieve", {"query": question, "limit": 10, "max_chars": 100_000,
                                                        "min_score": min_score, "relative_floor": relative_floor})
    data = answer.structured_content
    assert not answer.is_error and data["degraded"] is None, data
    return data


def answered(data: dict, dia_of: dict[str, str]) -> list[tuple[str, float, int]]:
    """(turn id, score, characters of its context line) of each item, best first."""
    lines = data["context"].split("\n")[1:-1] if data["context"] else []  # inside the delimiters
    assert len(lines) == len(data["items"]), data
    return [(dia_of[i["id"]], i["score"], len(line)) for i, line in zip(data["items"], lines, strict=True)]


def cut(items: list[tuple[str, float, int]], relative: float) -> list[tuple[str, float, int]]:
    """What the relative floor keeps of an answer given with the floor off."""
    return [i for i in items if i[1] >= relative * items[0][1]] if relative > 0 and items else items


def chars(items: list[tuple[str, float, int]]) -> int:
    return sum(size for _, _, size in items) + max(len(items) - 1, 0)


def recall(items: list[tuple[str, float, int]], evidence: set[str]) -> float:
    return len(evidence & {dia for dia, _, _ in items[:10]}) / len(evidence)


async def evaluate(folder: Path, other: Path, min_score: float, relative: float, sweep: bool) -> dict[str, list]:
    memories = read_jsonl(folder / "memories.jsonl")
    own, foreign = read_jsonl(folder / "queries.jsonl"), read_jsonl(other / "queries.jsonl")
    settings = load_settings(environ={}, overrides={
        "data_dir": tempfile.mkdtemp(prefix=f"selective-{folder.name}-"), "agent_id": folder.name,
        "team": "locomo", "rate_limit_per_second": 0, "log_level": "warning",
        "retrieval_inline_embed_max": 0})  # so "found by meaning" below means "indexed"
    out: dict[str, list] = {"on": [], "off": [], "on_sweep": [], "off_sweep": []}
    async with Client(create_server(settings), mode="auto") as client:
        dia_of: dict[str, str] = {}
        for start in range(0, len(memories), 10):
            batch = memories[start:start + 10]
            created = await client.call_tool("memory_crud", {
                "action": "create", "items": [{"content": m["text"]} for m in batch]})
            for memory, entry in zip(batch, created.structured_content["items"], strict=True):
                dia_of[entry["id"]] = memory["dia_id"]
        last = memories[-1]["text"]
        with anyio.fail_after(900):
            while True:
                probe = await client.call_tool("memory_retrieve", {"query": last, "mode": "semantic", "limit": 3,
                                                                   "min_score": 0, "relative_floor": 0})
                data = probe.structured_content
                if data["degraded"] is None and any(i["content"] == last for i in data["items"]):
                    break
                await anyio.sleep(0.2)
        for kind, queries in (("on", own), ("off", foreign)):
            for query in queries:
                before = answered(await ask(client, query["question"], min_score, 0.0), dia_of)
                after = answered(await ask(client, query["question"], min_score, relative), dia_of)
                out[kind].append((set(query["evidence"]) if kind == "on" else set(), before, after))
                if sweep:  # both floors off: the best match, for the min_score curve
                    data = await ask(client, query["question"], 0.0, 0.0)
                    best = max((i["score_parts"]["match"] for i in data["items"]), default=0.0)
                    found = answered(data, dia_of)
                    out[f"{kind}_sweep"].append((recall(found, set(query["evidence"])) if kind == "on" else 0.0, best))
    return out


def figures(total: dict[str, list], pick: int, relative: float | None = None) -> tuple[float, float, float, float]:
    """On-topic recall@10 and mean injected characters, off-topic false injection and mean
    characters: of the answers `pick` (1 before, 2 after), or `relative` applied to those before."""
    def items(row: tuple) -> list:
        return cut(row[1], relative) if relative is not None else row[pick]
    return (statistics.mean(recall(items(r), r[0]) for r in total["on"]),
            statistics.mean(chars(items(r)) for r in total["on"]),
            statistics.mean(1.0 if items(r) else 0.0 for r in total["off"]),
            statistics.mean(chars(items(r)) for r in total["off"]))


def print_relative_sweep(total: dict[str, list]) -> None:
    base = figures(total, 1, 0.0)
    rows = [(floor, *figures(total, 1, floor)) for floor in RELATIVE_SWEEP]
    print("\nrelative floor   on-topic recall@10 (change)   mean injected chars on-topic (change)   "
          "off-topic false injection   off-topic chars   recall lost per 10% chars saved (from the row above)")
    for i, (floor, rec, on_chars, false, off_chars) in enumerate(rows):
        step = (rows[i - 1][2] - on_chars) / base[1] if i else 0.0
        rate = f"{(rows[i - 1][1] - rec) / step * 0.1:.4f}" if step > 0 else "-"
        print(f"{floor:>14.2f}{rec:>13.3f} ({rec - base[0]:+.3f}){on_chars:>24.0f} ({on_chars / base[1] - 1:+6.1%})"
              f"{false:>20.3f}{off_chars:>24.0f}{rate:>30}")
    target = [r for r in rows if r[2] / base[1] - 1 <= TARGET_CHARS and r[1] - base[0] >= TARGET_RECALL]
    within = [r for r in rows if r[1] - base[0] >= TARGET_RECALL]
    best = min(within, key=lambda r: r[2])
    if target:
        print(f"target met (chars -1/3, recall -0.01 at most) from relative floor {target[0][0]:.2f}")
    else:
        print(f"target not met: within recall -0.01 the most saved is {best[2] / base[1] - 1:+.1%} chars "
              f"(relative floor {best[0]:.2f})")
    # The knee: the point of the curve (share of characters saved, recall lost, each over the
    # swept range) farthest above the chord from the first point to the last.
    saved = [1 - r[2] / base[1] for r in rows]
    lost = [base[0] - r[1] for r in rows]
    span_s, span_l = (max(saved) - min(saved)) or 1.0, (max(lost) - min(lost)) or 1.0
    knee = max(range(len(rows)), key=lambda i: saved[i] / span_s - lost[i] / span_l)
    print(f"knee of the whole curve (farthest from its chord): relative floor {rows[knee][0]:.2f} (recall "
          f"{-lost[knee]:+.3f}, chars {-saved[knee]:+.1%})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, help="the LoCoMo dev folder (default: $AGENT_MEMORY_LOCOMO, else "
                                                  "../shared/data/locomo/dev)")
    parser.add_argument("--min-score", type=float, default=None,
                        help="the floor to test (default: the server's retrieval_min_score)")
    parser.add_argument("--relative-floor", type=float, default=None,
                        help="the relative floor to test (default: the server's retrieval_relative_floor)")
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    data = locomo_dir(args.data)
    configure_logging("warning", "console")
    defaults = load_settings(environ={})
    min_score = args.min_score if args.min_score is not None else defaults.retrieval_min_score
    relative = args.relative_floor if args.relative_floor is not None else defaults.retrieval_relative_floor
    folders = sorted(p for p in data.iterdir() if p.is_dir())
    total: dict[str, list] = {"on": [], "off": [], "on_sweep": [], "off_sweep": []}
    started = time.perf_counter()
    for index, folder in enumerate(folders):
        got = anyio.run(evaluate, folder, folders[(index + 1) % len(folders)], min_score, relative, args.sweep)
        for key in total:
            total[key] += got[key]
        print(f"{folder.name}: done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    before, after = figures(total, 1), figures(total, 2)
    print(f"LoCoMo dev, hybrid, limit 10, min_score {min_score}: {len(total['on'])} on-topic, "
          f"{len(total['off'])} off-topic questions ({time.perf_counter() - started:.0f} s)")
    print(f"{'':<36}{'before (relative_floor 0)':>28}{f'after (relative_floor {relative})':>32}")
    for name, i, form in (("on-topic recall@10", 0, "{:.3f}"), ("mean injected chars per on-topic question", 1,
                          "{:.0f}"), ("off-topic false injection", 2, "{:.3f}"), ("mean injected chars off-topic", 3,
                          "{:.0f}")):
        change = f" ({after[i] / before[i] - 1:+.1%})" if i in (1, 3) and before[i] else ""
        print(f"{name:<44}{form.format(before[i]):>20}{form.format(after[i]) + change:>32}")
    if args.sweep:
        print_relative_sweep(total)
        print("\nmin_score (gate on the best match, without the unknown-name penalty; both floors off)   "
              "on-topic recall@10   off-topic false injection")
        for floor in SWEEP:
            rec = statistics.mean(r if best >= floor else 0.0 for r, best in total["on_sweep"])
            false = statistics.mean(1.0 if best >= floor and best > 0 else 0.0 for _, best in total["off_sweep"])
            print(f"{floor:>9.2f}{rec:>88.3f}{false:>28.3f}")


if __name__ == "__main__":
    main()
