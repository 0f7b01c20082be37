"""memory_retrieve speed at 10,000 and 100,000 entries.

    python tests/bench/bench_retrieve.py [--sizes 10000 100000] [--queries 200]

For each size: a fresh store behind a real stdio server; entries are realistic conversational
text (LoCoMo dev turns, recombined so that no two are identical) written through memory_crud in
bulks of 10; then, once the vector index has caught up, `--queries` LoCoMo questions go through
memory_retrieve (hybrid, limit 10). Prints the load time, p50/p95 round trip, and p50/p95 of the
server-side handling (the `duration_ms` of the server's canonical log line).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1].parent / "shared" / "data" / "locomo" / "dev"


def corpus() -> tuple[list[str], list[str]]:
    turns, questions = [], []
    for folder in sorted(DATA.iterdir()):
        turns += [json.loads(line)["text"] for line in (folder / "memories.jsonl").read_text().splitlines()]
        questions += [json.loads(line)["question"] for line in (folder / "queries.jsonl").read_text().splitlines()]
    return turns, questions


def texts(size: int, turns: list[str], rng: random.Random) -> list[str]:
    out = []
    for i in range(size):
        a, b = rng.choice(turns), rng.choice(turns)
        second = b.split(": ", 1)[-1].split(". ")[0]
        out.append(f"{a} {second}. (note {i})")
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def run(size: int, n_queries: int) -> None:
    turns, questions = corpus()
    rng = random.Random(size)
    data_dir = tempfile.mkdtemp(prefix=f"bench-retrieve-{size}-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update({"MEMORY_DATA_DIR": data_dir, "MEMORY_AGENT_ID": "bench", "MEMORY_TEAM": "bench",
                "MEMORY_RATE_LIMIT_PER_SECOND": "0", "MEMORY_LOG_FORMAT": "json",
                "MEMORY_RETRIEVAL_INLINE_EMBED_MAX": "0",  # "found by meaning" below means "indexed"
                # one namespace holds every entry: keep the pruner from trimming it to its default limit
                "MEMORY_MAX_ENTRIES_PER_NAMESPACE": str(size * 2)})
    log_path = Path(data_dir) / "server.log"
    params = StdioServerParameters(command=sys.executable, args=[str(HERE / "bench_server.py")], env=env)
    with log_path.open("w") as log:
        async with Client(stdio_client(params, errlog=log), mode="legacy", read_timeout_seconds=600) as client:
            started = time.perf_counter()
            items = texts(size, turns, rng)
            for start in range(0, size, 10):
                result = await client.call_tool("memory_crud", {
                    "action": "create", "items": [{"content": t} for t in items[start:start + 10]]})
                assert not result.is_error, result.structured_content
            written = time.perf_counter() - started
            with anyio.fail_after(3600):
                while True:
                    probe = await client.call_tool("memory_retrieve", {
                        "query": items[-1], "mode": "semantic", "limit": 3, "per_entry_max_chars": 100_000})
                    data = probe.structured_content
                    if data["degraded"] is None and any(i["content"] == items[-1] for i in data["items"]):
                        break
                    await anyio.sleep(0.5)
            indexed = time.perf_counter() - started
            round_trips = []
            asked = rng.sample(questions, min(n_queries, len(questions)))
            for question in asked[:10]:  # warm up
                await client.call_tool("memory_retrieve", {"query": question})
            for question in asked:
                t0 = time.perf_counter()
                answer = await client.call_tool("memory_retrieve", {"query": question, "limit": 10})
                round_trips.append((time.perf_counter() - t0) * 1000)
                assert not answer.is_error and answer.structured_content["degraded"] is None
    server = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    handled = [e["duration_ms"] for e in server if e.get("event") == "memory_retrieve_invocation"][-len(asked):]
    stages = [e["stages_ms"] for e in server if e.get("event") == "memory_retrieve_invocation"][-len(asked):]
    print(f"{size:>7} entries: written in {written:.1f} s ({size / written:.0f}/s), searchable by meaning after "
          f"{indexed:.1f} s")
    print(f"         round trip p50 {statistics.median(round_trips):.1f} ms p95 {percentile(round_trips, .95):.1f} ms;"
          f" server-side p50 {statistics.median(handled):.1f} ms p95 {percentile(handled, .95):.1f} ms")
    for stage in ("keyword", "semantic", "rank", "assemble"):
        values = [s.get(stage, 0.0) for s in stages]
        print(f"         stage {stage:<9} p50 {statistics.median(values):.1f} ms p95 {percentile(values, .95):.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    print("memory_retrieve hybrid, limit 10, over stdio")
    for size in args.sizes:
        anyio.run(run, size, args.queries)


if __name__ == "__main__":
    main()
