"""memory_retrieve speed, side by side with the reference knowledge-graph MCP server.

    python tests/bench/bench_retrieve.py [--sizes 1000 10000] [--queries 200] [--reference-max 10000]
                                         [--server-env MEMORY_EMBEDDING_INT8_COMPUTE=false]
                                         [--modes keyword hybrid semantic] [--compare OTHER_CHECKOUT]

For each size, the same texts and the same questions go to two servers over stdio, both running
on this machine:

- the reference server (`@modelcontextprotocol/server-memory`, Node, a JSONL file), npm-installed
  once into a cache directory (AGENT_MEMORY_TEST_CACHE, default ~/.cache/agent-memory-tests) as
  the Inspector e2e test does: the texts become entities (`create_entities`, observations = the
  text, 100 per call) and each question goes to `search_nodes`. Only at sizes up to
  `--reference-max`; skipped, with the reason printed, when node/npm or the registry is missing.
- ours: a fresh store behind the real stdio server; the texts are written through memory_crud in
  bulks of 10; once the vector index has caught up, each question goes through memory_retrieve
  (limit 10) in keyword mode and in hybrid mode (`--modes`; semantic mode is asked other questions
  of the same set, so that it never finds the query's vector in the server's cache of recent query
  vectors, filled by hybrid mode).
- the floor: `bench_noop` (bench_server.py's tool that does nothing) through our first server,
  in the same rotation: what the transport, dispatcher and client cost without any retrieval.
- with `--compare DIR`: the same again from another checkout's `server/` (e.g. a `git worktree` of
  an older commit), labelled `ours@DIR`, to compare two versions in one run.

Both are loaded first; then each question goes to the reference, ours keyword and ours hybrid in
turn, so that drift on a shared machine hits all three alike.

Texts are realistic conversational text (LoCoMo dev turns, recombined so that no two are
identical); questions are LoCoMo questions. Prints load times (ours: written entries/s,
"searchable by meaning N s after the last write", indexed entries/s from the first write to the
last vector), p50/p95 round trips per server and mode, and for ours the server-side handling
(the `duration_ms` of the canonical log line) and the p50/p95 of each retrieval stage.
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
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: its tests package
from tests.bench.locomo_data import DEFAULT, locomo_dir  # noqa: E402
from tests.npm_cache import node_script  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_share  # noqa: E402
import indexing_report  # noqa: E402
from indexing_report import load  # noqa: E402
from pg_bench import bench_postgres  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = DEFAULT  # main() sets the folder given (--data, $AGENT_MEMORY_LOCOMO)
REFERENCE = "@modelcontextprotocol/server-memory@2026.8.31"
REFERENCE_ENTRY = "node_modules/@modelcontextprotocol/server-memory/dist/index.js"
REFERENCE_BATCH = 100
MODES = ["keyword", "hybrid"]


SERVER_ENV: dict[str, str] = {}
QUESTIONS: list[str] = []  # asked while the index catches up (run() sets them)
EMBED_SAMPLE = [1024]  # texts the embedder alone is timed on (--embed-sample)
INDEX_BATCH = 256  # the indexer's batch once a backlog builds (read in main())


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


def spread(values: list[float]) -> str:
    return f"p50 {statistics.median(values):.1f} ms p95 {percentile(values, .95):.1f} ms"


def reference_command() -> tuple[list[str] | None, str]:
    """[node, script] of the reference server (installed on first use), or None and why not."""
    return node_script(REFERENCE, REFERENCE_ENTRY)


async def start_reference(stack: AsyncExitStack, command: list[str], size: int, items: list[str]) -> Client:
    """The reference server on a fresh file, holding `items` (one entity each, the text as its
    observation, `REFERENCE_BATCH` per `create_entities` call)."""
    data_dir = tempfile.mkdtemp(prefix=f"bench-reference-{size}-")
    stack.callback(shutil.rmtree, data_dir, ignore_errors=True)
    env = {**os.environ, "MEMORY_FILE_PATH": os.path.join(data_dir, "memory.jsonl")}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    log = stack.enter_context(open(os.path.join(data_dir, "server.log"), "w"))
    client = await stack.enter_async_context(
        Client(stdio_client(params, errlog=log), mode="legacy", read_timeout_seconds=600))
    started = time.perf_counter()
    for start in range(0, size, REFERENCE_BATCH):
        batch = [{"name": f"note {start + i}", "entityType": "memory", "observations": [text]}
                 for i, text in enumerate(items[start:start + REFERENCE_BATCH])]
        result = await client.call_tool("create_entities", {"entities": batch})
        assert not result.is_error, result.content
    written = time.perf_counter() - started
    print(f"  reference: written in {written:.1f} s ({size / written:.0f}/s, {REFERENCE_BATCH} per call)")
    return client


async def start_ours(stack: AsyncExitStack, size: int, items: list[str], store_env: dict[str, str] | None = None,
                     label: str = "ours", source: Path | None = None) -> tuple[Client, Path]:
    """Our server (stdio) on a fresh store holding `items`, once they are all searchable by
    meaning; also the path of its log."""
    data_dir = tempfile.mkdtemp(prefix=f"bench-retrieve-{size}-")
    stack.callback(shutil.rmtree, data_dir, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update({"MEMORY_DATA_DIR": data_dir, "MEMORY_AGENT_ID": "bench", "MEMORY_TEAM": "bench",
                "MEMORY_RATE_LIMIT_PER_SECOND": "0", "MEMORY_LOG_FORMAT": "json",
                "MEMORY_RETRIEVAL_INLINE_EMBED_MAX": "0",  # "found by meaning" below means "indexed"
                # one namespace holds every entry: keep the pruner from trimming it to its default limit
                "MEMORY_MAX_ENTRIES_PER_NAMESPACE": str(size * 2)})
    env.update(SERVER_ENV)
    env.update(store_env or {})
    if source is not None:  # that checkout's package comes first on the path
        env["PYTHONPATH"] = os.pathsep.join([str(source / "server"), *filter(None, [env.get("PYTHONPATH")])])
    log_path = Path(data_dir) / "server.log"
    script = HERE / "bench_server.py"
    if source is not None and (source / "tests" / "bench" / "bench_server.py").exists():
        script = source / "tests" / "bench" / "bench_server.py"  # that checkout's own, which knows its layout
    params = StdioServerParameters(command=sys.executable, args=[str(script)], env=env)
    log = stack.enter_context(log_path.open("w"))
    client = await stack.enter_async_context(
        Client(stdio_client(params, errlog=log), mode="legacy", read_timeout_seconds=600))
    during: list[float] = []  # hybrid retrieve round trips while the index catches up

    async def retrieve_now(n: int) -> None:
        t0 = time.perf_counter()
        answer = await client.call_tool("memory_retrieve", {"query": QUESTIONS[n % len(QUESTIONS)],
                                                            "mode": "hybrid", "limit": 10})
        during.append((time.perf_counter() - t0) * 1000)
        assert not answer.is_error, answer.content

    server_pid = cpu_share.find_server(data_dir)
    cpu_before = cpu_share.sample(server_pid) if server_pid is not None else None
    started = time.perf_counter()
    for n, start in enumerate(range(0, size, 10)):
        result = await client.call_tool("memory_crud", {
            "action": "create", "items": [{"content": t} for t in items[start:start + 10]]})
        assert not result.is_error, result.structured_content
        if QUESTIONS and n % 50 == 49:
            await retrieve_now(n)
    written = time.perf_counter() - started
    print(f"  {label}: written in {written:.1f} s ({size / written:.0f}/s)  [{load()}]", flush=True)
    n = 0
    with anyio.fail_after(3600):
        while True:
            probe = await client.call_tool("memory_retrieve", {
                "query": items[-1], "mode": "semantic", "limit": 3, "per_entry_max_chars": 100_000})
            data = probe.structured_content
            if data["degraded"] is None and any(i["content"] == items[-1] for i in data["items"]):
                break
            if QUESTIONS:
                await retrieve_now(n := n + 1)
            await anyio.sleep(0.5)
    indexed = time.perf_counter() - started
    cpu_after = cpu_share.sample(server_pid) if server_pid is not None else None
    print(f"  {label}: searchable by meaning after {indexed:.1f} s ({indexed - written:.1f} s after the last "
          f"write); indexed {size / indexed:.0f} entries/s  [{load()}]", flush=True)
    print(f"    {cpu_share.report(cpu_before, cpu_after)}")
    indexing_report.report(label, size, indexed, log_path, items, EMBED_SAMPLE[0] if source is None else 0,
                           INDEX_BATCH, during)
    return client, log_path


async def run(size: int, n_queries: int, reference: list[str] | None, backends: list[str],
              compare: Path | None = None) -> None:
    turns, questions = corpus()
    rng = random.Random(size)
    items = texts(size, turns, rng)
    asked = rng.sample(questions, min(n_queries, len(questions)))
    others = [q for q in questions if q not in set(asked)]
    other = random.Random(size + 1).sample(others, min(len(asked), len(others)))  # semantic mode's questions
    QUESTIONS[:] = other
    print(f"{size:,} entries, {len(asked)} questions")
    # Each question goes to every server and mode in turn, so drift on a shared machine hits all alike.
    calls: dict[str, tuple[Client, str, dict]] = {}
    async with AsyncExitStack() as stack:
        if reference:
            calls["reference search_nodes"] = (await start_reference(stack, reference, size, items), "search_nodes", {})
        logs: dict[str, Path] = {}
        for backend in backends:
            for source in [None, compare] if compare is not None else [None]:
                name = "ours" if backends == ["sqlite"] else f"ours/{backend}"
                name += f"@{source.name}" if source is not None else ""
                store_env = {}
                if backend == "postgres":
                    store_env = {"MEMORY_BACKEND": "postgres",
                                 "MEMORY_POSTGRES_URL": stack.enter_context(bench_postgres()).create_database()}
                ours, logs[name] = await start_ours(stack, size, items, store_env, name, source)
                for mode in MODES:
                    calls[f"{name} memory_retrieve {mode}"] = (ours, "memory_retrieve", {"mode": mode, "limit": 10})
                # The floor: a tool that does nothing, through the same server, transport and client.
                calls.setdefault("floor bench_noop", (ours, "bench_noop", {}))
        round_trips: dict[str, list[float]] = {label: [] for label in calls}
        warm_and_asked = zip(asked[:10] + asked, other[:10] + other, strict=False)  # the first 10: warm-up
        for n, (question, aside) in enumerate(warm_and_asked):
            for label, (client, tool, extra) in calls.items():
                t0 = time.perf_counter()
                asked_now = aside if extra.get("mode") == "semantic" else question
                asking = {} if tool == "bench_noop" else {"query": asked_now}
                answer = await client.call_tool(tool, {**asking, **extra})
                elapsed = (time.perf_counter() - t0) * 1000
                assert not answer.is_error, answer.content
                assert tool != "memory_retrieve" or answer.structured_content["degraded"] is None
                if n >= 10:
                    round_trips[label].append(elapsed)
        retrieves = {}
        for name, log_path in logs.items():
            lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
            retrieves[name] = [e for e in lines if e.get("tool") == "memory_retrieve"  # older servers:
                               and e.get("event") in ("tool_invocation", "memory_retrieve_invocation")  # that event
                               ][-len(asked) * len(MODES):]
    for label, values in round_trips.items():
        print(f"  {label:<40} round trip {spread(values)}")
        if label.startswith("ours"):
            mine = retrieves[label.split(" ", 1)[0]][MODES.index(label.rsplit(" ", 1)[1])::len(MODES)]
            print(f"      server-side {spread([e['duration_ms'] for e in mine])}")
            for stage in ("partitions", "keyword", "semantic", "fuse", "rank", "assemble", "render"):
                print(f"      stage {stage:<9} {spread([e['stages_ms'].get(stage, 0.0) for e in mine])}")
    print("  summary p50: " + ", ".join(f"{label} {statistics.median(v):.1f} ms" for label, v in round_trips.items()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000],
                        help="entries per store (100000 works too; it takes minutes to load)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--reference-max", type=int, default=10_000,
                        help="run the reference server only at sizes up to this (0: never)")
    parser.add_argument("--backends", nargs="+", choices=["sqlite", "postgres"], default=["sqlite"],
                        help="our stores, side by side in one run (postgres: tests/bench/pg_bench.py's server)")
    parser.add_argument("--modes", nargs="+", choices=["keyword", "hybrid", "semantic"], default=MODES,
                        help="memory_retrieve modes to time (semantic mode is asked other questions)")
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT",
                        help="also run our server from this checkout's server/ (e.g. a git worktree of HEAD)")
    parser.add_argument("--embed-sample", type=int, default=EMBED_SAMPLE[0],
                        help="texts the embedder alone is timed on after each load (0: skip)")
    parser.add_argument("--server-env", action="append", default=[], metavar="MEMORY_X=VALUE",
                        help="a setting for our server, e.g. MEMORY_EMBEDDING_INT8_COMPUTE=false")
    parser.add_argument("--data", type=Path, help="the LoCoMo dev folder (default: $AGENT_MEMORY_LOCOMO, else "
                                                  "../shared/data/locomo/dev)")
    args = parser.parse_args()
    global DATA
    DATA = locomo_dir(args.data)
    SERVER_ENV.update(item.split("=", 1) for item in args.server_env)
    MODES[:] = args.modes
    EMBED_SAMPLE[0] = args.embed_sample
    global INDEX_BATCH
    from agent_memory.storage.chroma import pipeline
    INDEX_BATCH = pipeline.BULK_BATCH
    reference, why = (None, "--reference-max 0")
    if any(size <= args.reference_max for size in args.sizes):
        reference, why = reference_command()
    if reference is None:
        print(f"reference server skipped: {why}")
    print("memory_retrieve (limit 10) vs the reference server's search_nodes, over stdio")
    for size in args.sizes:
        anyio.run(run, size, args.queries, reference if size <= args.reference_max else None, args.backends,
                  args.compare.resolve() if args.compare else None)


if __name__ == "__main__":
    main()
