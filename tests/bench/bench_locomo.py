"""Retrieval quality on LoCoMo dev: recall@5, recall@10 and MRR@10, overall and per category.

    python tests/bench/bench_locomo.py [--data ../shared/data/locomo/dev] [--mode hybrid] [--conv conv-26]
        [--backend sqlite|postgres|both] [--ask-after 5] [--cpu-hog] [--distractors N] [--set NAME=VALUE]

Needs the LoCoMo dev set (not in this repository): `--data DIR` or `AGENT_MEMORY_LOCOMO=DIR`, see
tests/bench/locomo_data.py; without it the script says so and exits 2.

For each conversation: a fresh store; every turn becomes one memory through `memory_crud` create
(content exactly the turn's `text`), written as that conversation's own agent; once the vector
index has caught up, each query goes through `memory_retrieve` (limit 10) as that agent. The
metrics are those of the data folder's README (BM25 baseline there: recall@10 0.569).

Read-your-writes: `--ask-after N` also loads each conversation into another fresh store and asks
its questions N seconds after the last create, without waiting for the vector index (so what it
has not reached is found by the retrieve's in-line embedding, `retrieval_inline_embed_max` and
`retrieval_inline_embed_ms`), and reports that figure beside the settled one, with how many
answers said `degraded` and how many memories they searched by keyword only. `--cpu-hog` runs a
CPU-bound process pinned to one core for the whole run (a loaded machine).

Recall in a crowd: `--distractors N` writes N other memories into each conversation's store,
before, between and after its sessions (`interleave`: each session's turns stay together, as a
conversation is written, so the ranking's neighbouring turns are still neighbours): the other
conversations' turns, then, past those, sentences joined from two of them (`distractors`). None
is one of the asked conversation's turns, so the score still counts only its own; what changes
is how many entries compete (the keyword search's word choice and candidate depth act from a few
thousand entries). In mode keyword the store has no vector index (`vector_backend = none`:
keyword ranking never reads it), which makes a 100,000-entry store a matter of minutes.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack, suppress
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


def hog() -> None:
    """Spin on one core until killed."""
    with suppress(AttributeError, OSError):
        os.sched_setaffinity(0, {0})
    while True:
        pass


def distractors(folder: Path, count: int) -> list[str]:
    """`count` texts from the conversations beside `folder`: their turns (shuffled), then each
    of those followed by the first sentence of another, numbered (so no two are the same)."""
    rng = random.Random(f"{folder.name}:{count}")
    others = [m["text"] for other in sorted(folder.parent.iterdir()) if other.is_dir() and other != folder
              for m in read_jsonl(other / "memories.jsonl")]
    rng.shuffle(others)
    out = others[:count]
    while len(out) < count:
        a, b = rng.choice(others), rng.choice(others)
        out.append(f"{a} {b.split(': ', 1)[-1].split('. ')[0]}. (note {len(out)})")
    return out


def interleave(memories: list[dict], crowd: list[str], seed: str) -> list[dict | str]:
    """The memories in their order, each session's turns together (as a conversation is written),
    and the crowd's texts before, between and after the sessions, each text in a gap drawn at random."""
    sessions: list[list[dict]] = []
    for memory in memories:
        if not sessions or sessions[-1][-1]["session"] != memory["session"]:
            sessions.append([])
        sessions[-1].append(memory)
    rng = random.Random(seed)
    gaps = [0] * (len(sessions) + 1)
    for _ in crowd:
        gaps[rng.randrange(len(gaps))] += 1
    out: list[dict | str] = []
    other = iter(crowd)
    for gap, session in zip(gaps, [*sessions, []], strict=True):
        out += [next(other) for _ in range(gap)] + session
    return out


async def evaluate_conversation(folder: Path, mode: str, postgres_url: str | None = None,
                                ask_after: float | None = None, fresh: dict | None = None,
                                crowd: int = 0, extra: dict | None = None) -> list[dict]:
    """Settled (`ask_after` None: questions once the index has caught up), else asked `ask_after`
    seconds after loading, with in-line embedding (`fresh`: settings overriding its defaults);
    `crowd`: distractors written between the sessions; `extra`: settings (`--set`)."""
    memories = read_jsonl(folder / "memories.jsonl")
    queries = read_jsonl(folder / "queries.jsonl")
    agent = folder.name
    setup: dict[str, object] = {"backend": "postgres", "postgres_url": postgres_url} if postgres_url else {}
    if mode == "keyword":
        setup["vector_backend"] = "none"
    if crowd:
        setup["max_entries_per_namespace"] = max(10_000, len(memories) + crowd + 1000)
    written = interleave(memories, distractors(folder, crowd), agent) if crowd else memories
    # Settled: no in-line embedding, so "found by meaning" below means "indexed".
    inline = dict(fresh or {}) if ask_after is not None else {"retrieval_inline_embed_max": 0}
    settings = load_settings(environ={}, overrides={
        "data_dir": tempfile.mkdtemp(prefix=f"locomo-{agent}-"), "agent_id": agent, "team": "locomo",
        "rate_limit_per_second": 0, "log_level": "warning", **inline, **setup, **(extra or {})})
    results = []
    async with Client(create_server(settings), mode="auto") as client:
        started = time.perf_counter()
        dia_of = await write_all(client, written)
        last = written[-1] if isinstance(written[-1], str) else written[-1]["text"]
        if ask_after is not None:
            await anyio.sleep(ask_after)
        # The outbox is applied in order: the last one indexed means all. A crowd of 100,000 takes
        # the indexer about 10 minutes alone (`bench_retrieve.py`), more beside other work.
        with anyio.fail_after(max(600.0, len(written) / 20)):
            while mode != "keyword" and ask_after is None:
                probe = await client.call_tool("memory_retrieve", {"query": last, "mode": "semantic", "limit": 3})
                data = probe.structured_content
                if data["degraded"] is None and any(i["content"] == last for i in data["items"]):
                    break
                await anyio.sleep(0.2)
        load_seconds = time.perf_counter() - started
        latencies = []
        degraded = keyword_only = 0
        for query in queries:
            t0 = time.perf_counter()
            answer = await client.call_tool("memory_retrieve", {"query": query["question"], "limit": 10,
                                                                 "mode": mode, "max_chars": 100_000})
            latencies.append((time.perf_counter() - t0) * 1000)
            data = answer.structured_content
            assert not answer.is_error and (ask_after is not None or data["degraded"] is None), data
            degraded += data["degraded"] is not None
            keyword_only += data["keyword_only"]
            ranked = [dia_of.get(i["id"], "") for i in data["items"]]
            evidence = set(query["evidence"])
            first = next((rank for rank, dia in enumerate(ranked[:10], 1) if dia in evidence), None)
            results.append({
                "category": query["category"],
                "r5": len(evidence & set(ranked[:5])) / len(evidence),
                "r10": len(evidence & set(ranked[:10])) / len(evidence),
                "mrr": 1 / first if first else 0.0,
            })
    loaded = "indexed" if ask_after is None else f"+{ask_after:g} s"
    crowded = f" among {crowd} others" if crowd else ""
    print(f"{agent} ({'postgres' if postgres_url else 'sqlite'}): {len(memories)} memories{crowded} loaded+{loaded} in "
          f"{load_seconds:.1f} s, {len(queries)} queries, retrieve first {latencies[0]:.0f} ms, p50 "
          f"{statistics.median(latencies):.1f} ms, max {max(latencies):.0f} ms; {degraded} answers degraded, "
          f"{keyword_only} memories keyword-only in all; load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    return results


async def write_all(client: Client, written: list) -> dict[str, str]:
    """Every memory through memory_crud create, in bulks of 10; the conversation's turns' ids ->
    their dialogue ids (distractors, plain strings, have none)."""
    dia_of: dict[str, str] = {}
    for start in range(0, len(written), 10):
        batch = written[start:start + 10]
        created = await client.call_tool("memory_crud", {
            "action": "create", "items": [{"content": m if isinstance(m, str) else m["text"]} for m in batch]})
        assert not created.is_error, created.structured_content
        for memory, entry in zip(batch, created.structured_content["items"], strict=True):
            if not isinstance(memory, str):
                dia_of[entry["id"]] = memory["dia_id"]
    return dia_of


def report(results: list[dict], mode: str) -> None:
    if not results:
        return
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
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="sqlite",
                        help="postgres: a fresh database per conversation on $MEMORY_BENCH_POSTGRES_URL's server, "
                             "else on the PostgreSQL bundled in the test extra (tests/bench/pg_bench.py); "
                             "both: each conversation on SQLite, then on PostgreSQL")
    parser.add_argument("--ask-after", type=float, metavar="SECONDS",
                        help="also ask each conversation's questions this long after loading it (not waiting for "
                             "the vector index), in another fresh store, beside the settled figure")
    parser.add_argument("--inline-max", type=int, help="retrieval_inline_embed_max for --ask-after (default: the "
                                                       "server's)")
    parser.add_argument("--inline-ms", type=float, help="retrieval_inline_embed_ms for --ask-after (default: the "
                                                        "server's)")
    parser.add_argument("--cpu-hog", action="store_true", help="run a CPU-bound process on one core for the run")
    parser.add_argument("--distractors", type=int, default=0, metavar="N",
                        help="write N memories from the other conversations between each one's sessions")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a server setting for every store (e.g. vector_exact_max=0)")
    args = parser.parse_args()
    extra = dict(item.split("=", 1) for item in args.set)
    data = locomo_dir(args.data)
    configure_logging("warning", "console")
    folders = sorted(p for p in data.iterdir() if p.is_dir() and (not args.conv or p.name in args.conv))
    fresh = {k: v for k, v in (("retrieval_inline_embed_max", args.inline_max),
                               ("retrieval_inline_embed_ms", args.inline_ms)) if v is not None}
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    variants = [None] if args.ask_after is None else [None, args.ask_after]
    results: dict[tuple[str, float | None], list[dict]] = defaultdict(list)
    started = time.perf_counter()
    with ExitStack() as stack:
        if args.cpu_hog:
            spinner = multiprocessing.Process(target=hog, daemon=True)
            spinner.start()
            stack.callback(spinner.kill)
            print(f"cpu hog: pid {spinner.pid} on core 0", file=sys.stderr)
        databases = stack.enter_context(bench_postgres()) if "postgres" in backends else None
        for folder in folders:  # settled and fresh side by side, conversation by conversation
            for backend in backends:
                for after in variants:
                    url = databases.create_database() if databases and backend == "postgres" else None
                    results[backend, after] += anyio.run(evaluate_conversation, folder, args.mode, url, after, fresh,
                                                         args.distractors, extra)
    for (backend, after), rows in results.items():
        when = "settled" if after is None else f"asked {after:g} s after loading"
        crowd = f", among {args.distractors} distractors" if args.distractors else ""
        told = "".join(f", {item}" for item in args.set)
        report(rows, f"{args.mode}, {backend}, {when}{', cpu hog' if args.cpu_hog else ''}{crowd}{told}")
    print(f"run {time.perf_counter() - started:.0f} s, load {os.getloadavg()}")


if __name__ == "__main__":
    main()
