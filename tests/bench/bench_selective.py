"""Selective recall on LoCoMo dev: on-topic recall@10 next to the off-topic false-injection rate.

    python tests/bench/bench_selective.py [--data ../shared/data/locomo/dev] [--min-score 0.45] [--sweep]

Each conversation's agent gets a fresh store holding its own turns (as in bench_locomo.py). It is
asked its own questions (on-topic: recall@10 against the evidence turns) and the next
conversation's questions (off-topic: people and events it never stored). The false-injection rate
is the share of off-topic questions that return at least one item; the characters they inject are
averaged too. `--sweep` also asks everything once with the floor off and prints, for a range of
floors, what the rates would have been (the floor is a query-level gate on score_parts.match).
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


async def ask(client: Client, question: str, min_score: float) -> dict:
    answer = await client.call_tool("memory_retrieve", {"query": question, "limit": 10, "max_chars": 100_000,
                                                        "min_score": min_score})
    data = answer.structured_content
    assert not answer.is_error and data["degraded"] is None, data
    return data


async def evaluate(folder: Path, other: Path, min_score: float, sweep: bool) -> dict[str, list]:
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
                                                                   "min_score": 0})
                data = probe.structured_content
                if data["degraded"] is None and any(i["content"] == last for i in data["items"]):
                    break
                await anyio.sleep(0.2)
        for query in own:
            data = await ask(client, query["question"], min_score)
            ranked = [dia_of[i["id"]] for i in data["items"]]
            evidence = set(query["evidence"])
            out["on"].append((len(evidence & set(ranked[:10])) / len(evidence), len(data["context"])))
            if sweep:
                data = await ask(client, query["question"], 0.0)
                ranked = [dia_of[i["id"]] for i in data["items"]]
                best = max((i["score_parts"]["match"] for i in data["items"]), default=0.0)
                out["on_sweep"].append((len(evidence & set(ranked[:10])) / len(evidence), best))
        for query in foreign:
            data = await ask(client, query["question"], min_score)
            out["off"].append((bool(data["items"]), len(data["context"])))
            if sweep:
                data = await ask(client, query["question"], 0.0)
                out["off_sweep"].append(max((i["score_parts"]["match"] for i in data["items"]), default=0.0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, help="the LoCoMo dev folder (default: $AGENT_MEMORY_LOCOMO, else "
                                                  "../shared/data/locomo/dev)")
    parser.add_argument("--min-score", type=float, default=None,
                        help="the floor to test (default: the server's retrieval_min_score)")
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    data = locomo_dir(args.data)
    configure_logging("warning", "console")
    min_score = args.min_score if args.min_score is not None else load_settings(environ={}).retrieval_min_score
    folders = sorted(p for p in data.iterdir() if p.is_dir())
    total: dict[str, list] = {"on": [], "off": [], "on_sweep": [], "off_sweep": []}
    started = time.perf_counter()
    for index, folder in enumerate(folders):
        got = anyio.run(evaluate, folder, folders[(index + 1) % len(folders)], min_score, args.sweep)
        for key in total:
            total[key] += got[key]
        print(f"{folder.name}: on-topic recall@10 {statistics.mean(r for r, _ in got['on']):.3f}, off-topic "
              f"false injection {statistics.mean(hit for hit, _ in got['off']):.3f}", file=sys.stderr)
    on_recall = statistics.mean(r for r, _ in total["on"])
    off_rate = statistics.mean(hit for hit, _ in total["off"])
    print(f"LoCoMo dev, hybrid, limit 10, min_score {min_score} ({time.perf_counter() - started:.0f} s)")
    print(f"on-topic  questions {len(total['on']):>4}  recall@10 {on_recall:.3f}  "
          f"mean context {statistics.mean(c for _, c in total['on']):.0f} chars")
    print(f"off-topic questions {len(total['off']):>4}  false injection {off_rate:.3f}  "
          f"mean context {statistics.mean(c for _, c in total['off']):.0f} chars")
    if args.sweep:
        print("\nfloor (gate on the best match, without the unknown-name penalty)   on-topic recall@10   "
              "off-topic false injection")
        for floor in SWEEP:
            recall = statistics.mean(r if best >= floor else 0.0 for r, best in total["on_sweep"])
            false = statistics.mean(1.0 if best >= floor and best > 0 else 0.0 for best in total["off_sweep"])
            print(f"{floor:>6.2f}{recall:>66.3f}{false:>28.3f}")


if __name__ == "__main__":
    main()
