"""The floor of a stdio round trip: a call that does nothing, through our server and its neighbours.

    python tests/bench/bench_floor.py [--calls 500] [--compare OTHER_CHECKOUT ...]

Spawns, each on a fresh data directory and over the same MCP client:
- ours: bench_server.py's `bench_noop` (the real server, transport, dispatcher, identity and log
  line; no storage), from this checkout and from each `--compare` checkout (e.g. a `git worktree`
  of an older commit), labelled `ours@DIR`;
- a bare SDK server (`MCPServer` with one tool returning "ok"), the same SDK without our layer;
- the reference knowledge-graph server's `read_graph` on an empty graph (when node and npm are
  installed; see bench_retrieve.py).

Calls go to each in turn, in a new random order each round, so that drift on a shared machine
and the work a server does after answering (which competes with the next call) hit all alike. Prints per server the
p50/p95 round trip, and the server process's CPU time and context switches (every thread) per
call: the two are read from /proc (Linux) and vary far less with the machine's load than the
round trip does.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from bench_cold_start import BARE  # noqa: E402  (the same bare server both benches time)
from bench_retrieve import reference_command  # noqa: E402
from cpu_share import TICK, cpu_ticks, stat_fields  # noqa: E402

WARM_UP = 30


def usage(pid: int) -> tuple[float, int]:
    """CPU seconds and context switches (voluntary and not, every thread) of process `pid` so far."""
    cpu = cpu_ticks(stat_fields(Path(f"/proc/{pid}/stat").read_text())) / TICK
    switches = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        for line in Path(f"/proc/{pid}/task/{task}/status").read_text().splitlines():
            if "ctxt_switches" in line:
                switches += int(line.split()[1])
    return cpu, switches


def children() -> set[int]:
    return {int(pid) for task in os.listdir("/proc/self/task")
            for pid in Path(f"/proc/self/task/{task}/children").read_text().split()}


async def start(stack: AsyncExitStack, command: list[str], env: dict[str, str]) -> tuple[Client, int]:
    """A client on a freshly spawned server, and the server's process id."""
    before = children()
    log = stack.enter_context(open(os.devnull, "w"))
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    client = await stack.enter_async_context(Client(stdio_client(params, errlog=log), mode="legacy",
                                                    read_timeout_seconds=60))
    (pid,) = children() - before
    return client, pid


async def run(calls: int, checkouts: list[Path]) -> None:
    async with AsyncExitStack() as stack:
        servers: dict[str, tuple[Client, int, str]] = {}
        base = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
        for checkout in checkouts:
            env = {**base, "MEMORY_DATA_DIR": tempfile.mkdtemp(prefix="bench-floor-"), "MEMORY_AGENT_ID": "bench",
                   "MEMORY_TEAM": "bench", "MEMORY_RATE_LIMIT_PER_SECOND": "0", "MEMORY_VECTOR_BACKEND": "none",
                   "PYTHONPATH": str(checkout / "server")}
            client, pid = await start(stack, [sys.executable, str(checkout / "tests/bench/bench_server.py")], env)
            servers["ours" if checkout == ROOT else f"ours@{checkout}"] = (client, pid, "bench_noop")
        bare = Path(tempfile.mkdtemp(prefix="bench-floor-")) / "bare.py"
        bare.write_text(BARE)
        client, pid = await start(stack, [sys.executable, str(bare)], base)
        servers["bare SDK server"] = (client, pid, "noop")
        reference, why = reference_command()
        if reference is None:
            print(f"reference server skipped: {why}")
        else:
            graph = Path(tempfile.mkdtemp(prefix="bench-floor-")) / "memory.jsonl"
            client, pid = await start(stack, reference, {**base, "MEMORY_FILE_PATH": str(graph)})
            servers["reference read_graph"] = (client, pid, "read_graph")
        timings: dict[str, list[float]] = {name: [] for name in servers}
        before: dict[str, tuple[float, int]] = {}
        rng, names = random.Random(7), list(servers)
        for i in range(WARM_UP + calls):
            if i == WARM_UP:
                before = {name: usage(pid) for name, (_, pid, _) in servers.items()}
            rng.shuffle(names)
            for name in names:
                client, _, tool = servers[name]
                started = time.perf_counter()
                result = await client.call_tool(tool, {})
                if i >= WARM_UP:
                    timings[name].append((time.perf_counter() - started) * 1000)
                if result.is_error:
                    raise RuntimeError(f"{name}: {result.content}")
        after = {name: usage(pid) for name, (_, pid, _) in servers.items()}
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"a call that does nothing, over stdio: {calls} calls each, interleaved  [load {load}]")
    for name, values in timings.items():
        values.sort()
        cpu = (after[name][0] - before[name][0]) / calls * 1000
        switches = (after[name][1] - before[name][1]) / calls
        p95 = values[int(0.95 * (len(values) - 1))]
        print(f"  {name:<28} p50 {statistics.median(values):6.2f} ms  p95 {p95:6.2f} ms"
              f"  server CPU {cpu:5.2f} ms/call  context switches {switches:5.1f}/call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--compare", type=Path, nargs="*", default=[], metavar="CHECKOUT",
                        help="also run bench_server.py from these checkouts (e.g. a git worktree of HEAD)")
    args = parser.parse_args()
    anyio.run(run, args.calls, [ROOT, *(path.resolve() for path in args.compare)])


if __name__ == "__main__":
    main()
