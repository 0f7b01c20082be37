"""memory_reflect at scale: log a 2,000-turn session, compact it, reflect it.

    python tests/bench/bench_reflect.py [--turns 2000] [--batch 100] [--queries 60]

One real stdio server on a fresh data directory (vector index on, background reflection and
pruning off, automatic compaction off so that compaction is the measured stage). The session is
real conversation: LoCoMo dev turns in order (role user, the speaker as name, the session date as
`at`). Prints the time of each stage, and for `--queries` LoCoMo questions about those turns the
size of memory_retrieve's answer (hybrid, limit 10) before and after compaction: items, context
characters, dropped, and how many answers still contain an evidence turn (or the summary).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1].parent / "shared" / "data" / "locomo" / "dev"
SESSION = "bench-session"


def session_turns(n: int) -> tuple[list[dict], dict[str, str], list[dict]]:
    turns, by_dia, queries = [], {}, []
    for folder in sorted(DATA.iterdir()):
        for line in (folder / "memories.jsonl").read_text().splitlines():
            row = json.loads(line)
            if len(turns) < n:
                text = row["text"].split(": ", 1)[-1]
                turns.append({"role": "user", "name": row["speaker"], "content": text,
                              "at": row["session_date_iso"] + ":00Z"})
                by_dia[f"{row['conv']}:{row['dia_id']}"] = text
        for line in (folder / "queries.jsonl").read_text().splitlines():
            row = json.loads(line)
            evidence = {by_dia.get(f"{row['conv']}:{d}") for d in row["evidence"]} - {None}
            if evidence:
                queries.append({"question": row["question"], "evidence": evidence})
    return turns, by_dia, queries


async def call(client: Client, tool: str, arguments: dict) -> tuple[dict, float]:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    elapsed = time.perf_counter() - started
    assert not result.is_error, result.structured_content
    return result.structured_content, elapsed


async def settle(client: Client, probe: str) -> float:
    """Waits until semantic search answers (not degraded) and finds `probe`."""
    started = time.perf_counter()
    with anyio.fail_after(1800):
        while True:
            data, _ = await call(client, "memory_retrieve", {"query": probe, "mode": "semantic", "limit": 5,
                                                             "per_entry_max_chars": 100_000})
            if data["degraded"] is None and any(probe in i["content"] for i in data["items"]):
                return time.perf_counter() - started
            await anyio.sleep(0.5)


async def measure(client: Client, queries: list[dict], summary_ids: set[str]) -> dict[str, float]:
    items, chars, dropped, hits, turn_hits, times = [], [], [], 0, 0, []
    for query in queries:
        data, elapsed = await call(client, "memory_retrieve", {"query": query["question"], "limit": 10})
        times.append(elapsed * 1000)
        items.append(len(data["items"]))
        chars.append(data["used_chars"])
        dropped.append(data["dropped"])
        contents = {i["content"].rstrip("…") for i in data["items"]}
        found_turn = any(any(e.startswith(c) or c.startswith(e) for c in contents) for e in query["evidence"])
        turn_hits += found_turn
        hits += found_turn or bool(summary_ids & {i["id"] for i in data["items"]})
    return {"items": statistics.mean(items), "chars": statistics.mean(chars), "dropped": statistics.mean(dropped),
            "hit": hits / len(queries), "turn_hit": turn_hits / len(queries), "p50": statistics.median(times)}


async def run(n_turns: int, batch: int, n_queries: int) -> None:
    turns, _, queries = session_turns(n_turns)
    queries = queries[:n_queries]
    data_dir = tempfile.mkdtemp(prefix="bench-reflect-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update({"MEMORY_DATA_DIR": data_dir, "MEMORY_AGENT_ID": "bench", "MEMORY_TEAM": "bench",
                "MEMORY_RATE_LIMIT_PER_SECOND": "0", "MEMORY_COMPACTION_THRESHOLD_CHARS": "0",
                "MEMORY_RETRIEVAL_INLINE_EMBED_MAX": "0",
                "MEMORY_REFLECTION_INTERVAL_SECONDS": "0", "MEMORY_PRUNE_INTERVAL_SECONDS": "0",
                "MEMORY_LOG_LEVEL": "warning"})
    command = str(Path(sys.executable).with_name("agent-memory"))
    params = StdioServerParameters(command=command, args=["serve"], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=600) as client:
        batch_times = []
        started = time.perf_counter()
        for start in range(0, len(turns), batch):
            _, elapsed = await call(client, "memory_reflect", {"action": "log", "session_id": SESSION,
                                                                "turns": turns[start:start + batch]})
            batch_times.append(elapsed * 1000)
        logged = time.perf_counter() - started
        indexed = await settle(client, turns[-1]["content"])
        before = await measure(client, queries, set())
        compacted, t_compact = await call(client, "memory_reflect", {"action": "compact", "session_id": SESSION})
        reflected, t_reflect = await call(client, "memory_reflect", {"action": "reflect", "session_id": SESSION,
                                                                     "use_sampling": False, "max_items": 100})
        # The turns left intact are the most recent by `at`; a new fact must have been indexed.
        settled = await settle(client, reflected["items"][-1]["content"])
        after = await measure(client, queries, {compacted["summary_id"]})
    facts = sum(1 for i in reflected["items"] if i["layer"] == "long_term")
    rules = sum(1 for i in reflected["items"] if i["layer"] == "meta")
    print(f"memory_reflect, one session of {len(turns)} turns (LoCoMo dev), stdio, vector index on")
    print(f"  log      {len(batch_times)} calls of {batch} turns: {logged:.2f} s total "
          f"({len(turns) / logged:.0f} turns/s), per call p50 {statistics.median(batch_times):.0f} ms "
          f"max {max(batch_times):.0f} ms; searchable by meaning {indexed:.1f} s later")
    print(f"  compact  {compacted['compacted']} turns into one {len(compacted['items'][0]['content'])}-character "
          f"summary: {t_compact * 1000:.0f} ms")
    print(f"  reflect  extractive, {reflected['turns_processed']} turns -> {facts} facts + {rules} rules: "
          f"{t_reflect * 1000:.0f} ms; index settled {settled:.1f} s after")
    print(f"  memory_retrieve over {len(queries)} LoCoMo questions (hybrid, limit 10, default budget):")
    for label, m in (("before compaction", before), ("after compaction", after)):
        print(f"    {label:<18} items {m['items']:.1f}  context {m['chars']:.0f} chars  dropped {m['dropped']:.1f}  "
              f"evidence turn in answer {m['turn_hit']:.0%} (or the summary {m['hit']:.0%})  p50 {m['p50']:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    anyio.run(run, args.turns, args.batch, args.queries)


if __name__ == "__main__":
    main()
