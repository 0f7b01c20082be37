"""A keyword-only server beside a hybrid one (and the reference server), on the same data, in one run.

    python tests/bench/bench_sidebyside.py [--size 1000] [--queries 200] [--no-reference]
                                           [--compare OTHER_CHECKOUT] [--backend sqlite|postgres]

Spawns over stdio, each on a fresh store holding the same `--size` texts (bench_retrieve.py's
corpus: recombined LoCoMo dev turns, written through memory_crud in bulks of 10):
- `hybrid`: our server with its default settings (the vector index; the timing starts once every
  entry is searchable by meaning);
- `keyword-only`: our server started with `MEMORY_VECTOR_BACKEND=none`;
- with `--compare DIR`: both again from that checkout's `server/` (e.g. a `git worktree` of an
  older commit), labelled `...@DIR`, to compare two versions in one run;
- the reference knowledge-graph server (`search_nodes`), when node and npm are installed.
With `--backend postgres` ours keep their records in PostgreSQL (tests/bench/pg_bench.py's
server, a fresh database each).

Each question goes to `memory_retrieve` with the default arguments (`{"query": ...}`: mode
hybrid, the server's defaults for the rest) on every server in turn, in a new random order each
round, with `bench_noop` (the floor: the same server without storage) and `memory_crud` `list`
(limit 25) of each of ours in the same rotation, so that drift on a shared machine hits all
alike. Prints p50/p95 round trips, each one's p50 against its own server's no-op, the
server-side `duration_ms` and stages of the retrieves (from the canonical log line), and whether
any answer was degraded (and why: a keyword-only server's hybrid call says that search by
meaning is switched off).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))
import bench_retrieve  # noqa: E402
from bench_retrieve import percentile, reference_command, start_reference, texts  # noqa: E402
from pg_bench import bench_postgres  # noqa: E402

from tests.bench.locomo_data import locomo_dir  # noqa: E402

WARM_UP = 10
STAGES = ("partitions", "keyword", "semantic", "fuse", "rank", "assemble", "render")


async def start(stack: AsyncExitStack, label: str, items: list[str], backend: str,
                source: Path | None, postgres_url: str | None) -> tuple[Client, Path]:
    """Our server on a fresh store holding `items` (searchable by meaning, unless `backend` is
    none), and the path of its log."""
    data_dir = tempfile.mkdtemp(prefix="bench-sidebyside-")
    stack.callback(shutil.rmtree, data_dir, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update({"MEMORY_DATA_DIR": data_dir, "MEMORY_AGENT_ID": "bench", "MEMORY_TEAM": "bench",
                "MEMORY_RATE_LIMIT_PER_SECOND": "0", "MEMORY_LOG_FORMAT": "json",
                "MEMORY_MAX_ENTRIES_PER_NAMESPACE": str(len(items) * 2)})
    if backend == "none":
        env["MEMORY_VECTOR_BACKEND"] = "none"
    if postgres_url is not None:
        env.update({"MEMORY_BACKEND": "postgres", "MEMORY_POSTGRES_URL": postgres_url})
    script = HERE / "bench_server.py"
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(source / "server"), *filter(None, [env.get("PYTHONPATH")])])
        script = source / "tests" / "bench" / "bench_server.py"
    log_path = Path(data_dir) / "server.log"
    log = stack.enter_context(log_path.open("w"))
    params = StdioServerParameters(command=sys.executable, args=[str(script)], env=env)
    client = await stack.enter_async_context(
        Client(stdio_client(params, errlog=log), mode="legacy", read_timeout_seconds=600))
    started = time.perf_counter()
    for start_at in range(0, len(items), 10):
        result = await client.call_tool("memory_crud", {
            "action": "create", "items": [{"content": t} for t in items[start_at:start_at + 10]]})
        assert not result.is_error, result.structured_content
    if backend != "none":
        with anyio.fail_after(3600):
            while True:
                probe = (await client.call_tool("memory_retrieve", {
                    "query": items[-1], "mode": "semantic", "limit": 3, "per_entry_max_chars": 100_000,
                })).structured_content
                if probe["degraded"] is None and any(i["content"] == items[-1] for i in probe["items"]):
                    break
                await anyio.sleep(0.5)
    print(f"  {label}: loaded in {time.perf_counter() - started:.1f} s", flush=True)
    return client, log_path


def spread(values: list[float]) -> str:
    return f"p50 {statistics.median(values):6.2f} ms  p95 {percentile(values, .95):6.2f} ms"


async def run(size: int, n_queries: int, reference: list[str] | None, compare: Path | None, store: str) -> None:
    turns, questions = bench_retrieve.corpus()
    rng = random.Random(size)
    items = texts(size, turns, rng)
    asked = rng.sample(questions, min(n_queries, len(questions)))
    print(f"{size:,} entries ({store}), {len(asked)} questions, memory_retrieve with default arguments")
    async with AsyncExitStack() as stack:
        calls: dict[str, tuple[Client, str, dict]] = {}
        logs: dict[str, Path] = {}
        pg = stack.enter_context(bench_postgres()) if store == "postgres" else None  # one server, a database each
        if reference:
            client = await start_reference(stack, reference, size, items)
            calls["reference search_nodes"] = (client, "search_nodes", {})
        for source in [None, compare] if compare is not None else [None]:
            suffix = f"@{source.name}" if source is not None else ""
            for name, backend in (("hybrid", "chroma"), ("keyword-only", "none")):
                label = name + suffix
                url = pg.create_database() if pg is not None else None
                client, logs[label] = await start(stack, label, items, backend, source, url)
                calls[f"{label} retrieve"] = (client, "memory_retrieve", {})
                calls[f"{label} list"] = (client, "memory_crud", {"action": "list", "limit": 25})
                calls[f"{label} noop"] = (client, "bench_noop", {})
        timings: dict[str, list[float]] = {label: [] for label in calls}
        degraded: dict[str, Counter] = {label: Counter() for label in calls}
        order = list(calls)
        shuffle = random.Random(7)
        for n, question in enumerate(asked[:WARM_UP] + asked):
            shuffle.shuffle(order)
            for label in order:
                client, tool, extra = calls[label]
                arguments = {**extra, "query": question} if tool in ("memory_retrieve", "search_nodes") else extra
                t0 = time.perf_counter()
                answer = await client.call_tool(tool, arguments)
                elapsed = (time.perf_counter() - t0) * 1000
                assert not answer.is_error, (label, answer.content)
                if n >= WARM_UP:
                    timings[label].append(elapsed)
                    if tool == "memory_retrieve":
                        degraded[label][answer.structured_content["degraded"] or ""] += 1
        lines = {label: [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]
                 for label, path in logs.items()}
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"round trips over stdio, {len(asked)} calls each, interleaved  [load {load}]")
    for label, values in timings.items():
        server = label.rsplit(" ", 1)[0]
        floor = timings.get(f"{server} noop")
        ratio = f"  {statistics.median(values) / statistics.median(floor):5.2f}x its no-op" if floor else ""
        print(f"  {label:<28} {spread(values)}{ratio}")
        if label.endswith(" retrieve"):
            for answer, count in degraded[label].items():
                print(f"      {count} answers degraded: {answer}" if answer else f"      {count} not degraded")
            mine = [e for e in lines[server] if e.get("tool") == "memory_retrieve"
                    and e.get("event") in ("tool_invocation", "memory_retrieve_invocation")][-len(asked):]
            print(f"      server-side {spread([e['duration_ms'] for e in mine])}")
            for stage in STAGES:
                print(f"      stage {stage:<10} {spread([e.get('stages_ms', {}).get(stage, 0.0) for e in mine])}")
    print("  summary p50: " + ", ".join(f"{label} {statistics.median(v):.1f} ms" for label, v in timings.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-reference", action="store_true", help="leave the reference server out")
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT",
                        help="also run both of ours from this checkout's server/ (e.g. a git worktree of HEAD)")
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite", help="our record store")
    parser.add_argument("--data", type=Path, help="the LoCoMo dev folder (default: $AGENT_MEMORY_LOCOMO, else "
                                                  "../shared/data/locomo/dev)")
    args = parser.parse_args()
    bench_retrieve.DATA = locomo_dir(args.data)
    reference, why = (None, "--no-reference") if args.no_reference else reference_command()
    if reference is None:
        print(f"reference server skipped: {why}")
    anyio.run(run, args.size, args.queries, reference, args.compare.resolve() if args.compare else None,
              args.backend)


if __name__ == "__main__":
    main()
