"""Retrieval quality on LoCoMo dev: recall@5, recall@10 and MRR@10, overall and per category.

    python tests/bench/bench_locomo.py [--data ../shared/data/locomo/dev] [--mode hybrid] [--conv conv-26]

Needs the LoCoMo dev set (not in this repository): `--data DIR` or `AGENT_MEMORY_LOCOMO=DIR`, see
tests/bench/locomo_data.py; without it the script says so and exits 2.

For each conversation: a fresh store; every turn becomes one memory through `memory_crud` create
(content exactly the turn's `text`), written as that conversation's own agent; once the vector
index has caught up, each query goes through `memory_retrieve` (limit 10) as that agent. The
metrics are those of the data folder's README (BM25 baseline there: recall@10 0.569).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

import anyio
from mcp import Client

from agent_memory.config import load_settings
from agent_memory.logging import configure_logging
from agent_memory.tools.server import create_server

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_data import locomo_dir  # noqa: E402
from pg_bench import bench_postgres  # noqa: E402

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def evaluate_conversation(folder: Path, mode: str, postgres_url: str | None = None) -> list[dict]:
    memories = read_jsonl(folder / "memories.jsonl")
    queries = read_jsonl(folder / "queries.jsonl")
    agent = folder.name
    store = {"backend": "postgres", "postgres_url": postgres_url} if postgres_url else {}
    settings = load_settings(environ={}, overrides={
        "data_dir": tempfile.mkdtemp(prefix=f"locomo-{agent}-"), "agent_id": agent, "team": "locomo",
        "rate_limit_per_second": 0, "log_level": "warning",
        "retrieval_inline_embed_max": 0, **store})  # so "found by meaning" below means "indexed"
    results = []
    async with Client(create_server(settings), mode="auto") as client:
        dia_of: dict[str, str] = {}
        started = time.perf_counter()
        for start in range(0, len(memories), 10):
            batch = memories[start:start + 10]
            created = await client.call_tool("memory_crud", {
                "action": "create", "items": [{"content": m["text"]} for m in batch]})
            assert not created.is_error, created.structured_content
            for memory, entry in zip(batch, created.structured_content["items"], strict=True):
                dia_of[entry["id"]] = memory["dia_id"]
        last = memories[-1]["text"]
        with anyio.fail_after(600):  # the outbox is applied in order: the last one indexed means all
            while mode != "keyword":
                probe = await client.call_tool("memory_retrieve", {"query": last, "mode": "semantic", "limit": 3})
                data = probe.structured_content
                if data["degraded"] is None and any(i["content"] == last for i in data["items"]):
                    break
                await anyio.sleep(0.2)
        load_seconds = time.perf_counter() - started
        latencies = []
        for query in queries:
            t0 = time.perf_counter()
            answer = await client.call_tool("memory_retrieve", {"query": query["question"], "limit": 10,
                                                                 "mode": mode, "max_chars": 100_000})
            latencies.append((time.perf_counter() - t0) * 1000)
            data = answer.structured_content
            assert not answer.is_error and data["degraded"] is None, data
            ranked = [dia_of[i["id"]] for i in data["items"]]
            evidence = set(query["evidence"])
            first = next((rank for rank, dia in enumerate(ranked[:10], 1) if dia in evidence), None)
            results.append({
                "category": query["category"],
                "r5": len(evidence & set(ranked[:5])) / len(evidence),
                "r10": len(evidence & set(ranked[:10])) / len(evidence),
                "mrr": 1 / first if first else 0.0,
            })
    print(f"{agent}: {len(memories)} memories loaded+indexed in {load_seconds:.1f} s, {len(queries)} queries, "
          f"retrieve p50 {statistics.median(latencies):.1f} ms", file=sys.stderr)
    return results


def report(results: list[dict], mode: str) -> None:
    def line(name: str, rows: list[dict]) -> str:
        return (f"{name:<12}{len(rows):>6}{statistics.mean(r['r5'] for r in rows):>10.3f}"
                f"{statistics.mean(r['r10'] for r in rows):>11.3f}{statistics.mean(r['mrr'] for r in rows):>9.3f}")

    print(f"LoCoMo dev, memory_retrieve mode={mode}, limit 10")
    print(f"{'category':<12}{'n':>6}{'recall@5':>10}{'recall@10':>11}{'MRR@10':>9}")
    by_category: dict[int, list[dict]] = defaultdict(list)
    for row in results:
        by_category[row["category"]].append(row)
    for category in sorted(by_category):
        print(line(CATEGORIES.get(category, str(category)), by_category[category]))
    print(line("overall", results))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, help="the LoCoMo dev folder (default: $AGENT_MEMORY_LOCOMO, else "
                                                  "../shared/data/locomo/dev)")
    parser.add_argument("--mode", choices=["hybrid", "semantic", "keyword"], default="hybrid")
    parser.add_argument("--conv", action="append", help="only these conversations")
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite",
                        help="postgres: a fresh database per conversation on $MEMORY_BENCH_POSTGRES_URL's server, "
                             "else on the PostgreSQL bundled in the test extra (tests/bench/pg_bench.py)")
    args = parser.parse_args()
    data = locomo_dir(args.data)
    configure_logging("warning", "console")
    folders = sorted(p for p in data.iterdir() if p.is_dir() and (not args.conv or p.name in args.conv))
    results: list[dict] = []
    with ExitStack() as stack:
        databases = stack.enter_context(bench_postgres()) if args.backend == "postgres" else None
        for folder in folders:
            url = databases.create_database() if databases else None
            results += anyio.run(evaluate_conversation, folder, args.mode, url)
    report(results, f"{args.mode}, {args.backend}")


if __name__ == "__main__":
    main()
