"""memory_crud round trips over one stdio session, side by side with a no-op tool.

    python tests/bench/bench_crud.py [--calls 1000] [--mode legacy|auto] [--before DIR]

Spawns the real server (plus a benchmark-only no-op tool) on a fresh data directory and, for
`--calls` rounds, calls no-op, create, read, update and list (limit 25) once each, interleaved so
that drift on a shared machine hits every operation alike. With the default vector backend each
create and update is also embedded in the background, competing for the same 2 cores. Prints
median and p95 per operation and each one's ratio to the no-op floor. Target: every ratio
within 1.5x.

`page` is a second floor: a tool that returns a fixed 25-entry page without touching storage,
so `list` can also be read against the cost of moving a page of that size through the stack.

`--before DIR` runs another checkout's server (DIR/server, e.g. from
`git archive HEAD~3 server | tar -x -C DIR`) beside this one, the two interleaved call by call in
one run, and prints both tables (each against its own no-op floor).
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
OPERATIONS = ("noop", "create", "read", "update", "list", "page")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Session:
    """One server over stdio, its own data directory, ids and timings."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.timings: dict[str, list[float]] = {op: [] for op in OPERATIONS}
        self.rng = random.Random(7)
        self.ids: list[str] = []

    async def timed(self, op: str, name: str, arguments: dict) -> dict:
        started = time.perf_counter()
        result = await self.client.call_tool(name, arguments)
        self.timings[op].append((time.perf_counter() - started) * 1000)
        if result.is_error:
            raise RuntimeError(f"{op} failed: {result.structured_content}")
        return result.structured_content or {}

    async def warm_up(self) -> None:
        for i in range(50):  # every path
            await self.client.call_tool("bench_noop", {})
            created = await self.client.call_tool("memory_crud", {"action": "create",
                                                                  "items": [{"content": f"warm {i}"}]})
            self.ids.append(created.structured_content["items"][0]["id"])

    async def round(self, i: int) -> None:
        await self.timed("noop", "bench_noop", {})
        content = f"Benchmark memory {i}: the build for service {i % 17} needs flag --fast"
        created = await self.timed("create", "memory_crud",
                                   {"action": "create", "items": [{"content": content, "tags": ["bench"]}]})
        self.ids.append(created["items"][0]["id"])
        await self.timed("read", "memory_crud", {"action": "read", "items": [{"id": self.rng.choice(self.ids)}]})
        change = {"id": self.rng.choice(self.ids), "content": f"updated {i}"}
        await self.timed("update", "memory_crud", {"action": "update", "items": [change]})
        await self.timed("list", "memory_crud", {"action": "list", "limit": 25})
        await self.timed("page", "bench_page", {})


async def run(calls: int, mode: str, vector_backend: str, before: str | None = None
              ) -> dict[str, dict[str, list[float]]]:
    """Timings per server ("ours", and "before" with `before`), interleaved call by call."""
    sessions: dict[str, Session] = {}
    async with AsyncExitStack() as stack:
        for name in (["before"] if before else []) + ["ours"]:
            data_dir = tempfile.mkdtemp(prefix="bench-crud-")
            env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
            env.update({"MEMORY_DATA_DIR": data_dir, "MEMORY_AGENT_ID": "bench", "MEMORY_TEAM": "bench",
                        "MEMORY_RATE_LIMIT_PER_SECOND": "0", "MEMORY_VECTOR_BACKEND": vector_backend})
            if name == "before":
                assert before is not None
                env["PYTHONPATH"] = str(Path(before).resolve() / "server")
            script = HERE / "bench_server.py"
            if name == "before" and (Path(before) / "tests" / "bench" / "bench_server.py").exists():
                script = Path(before).resolve() / "tests" / "bench" / "bench_server.py"  # it knows its own layout
            params = StdioServerParameters(command=sys.executable, args=[str(script)], env=env)
            server_log = stack.enter_context(open(os.path.join(data_dir, "server.log"), "w"))  # its stderr
            client = await stack.enter_async_context(
                Client(stdio_client(params, errlog=server_log), mode=mode, read_timeout_seconds=60))
            sessions[name] = Session(client)
        for session in sessions.values():
            await session.warm_up()
        order = list(sessions.values())
        for i in range(calls):  # each goes first every other round: neither always follows the other
            for session in order if i % 2 == 0 else order[::-1]:
                await session.round(i)
    return {name: session.timings for name, session in sessions.items()}


def table(timings: dict[str, list[float]]) -> None:
    floor_p50 = statistics.median(timings["noop"])
    floor_p95 = percentile(timings["noop"], 0.95)
    print(f"{'operation':<10}{'p50 ms':>10}{'p95 ms':>10}{'p50/floor':>12}{'p95/floor':>12}")
    for op in OPERATIONS:
        p50, p95 = statistics.median(timings[op]), percentile(timings[op], 0.95)
        print(f"{op:<10}{p50:>10.3f}{p95:>10.3f}{p50 / floor_p50:>12.2f}{p95 / floor_p95:>12.2f}")
    page_p50 = statistics.median(timings["page"])
    print(f"list p50 / page p50 (same payload, no storage): {statistics.median(timings['list']) / page_p50:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--mode", choices=["legacy", "auto"], default="legacy")
    parser.add_argument("--vector-backend", choices=["chroma", "none"], default="chroma",
                        help="none: no background embedding of each write (the CRUD path alone)")
    parser.add_argument("--before", metavar="DIR", help="another checkout (DIR/server) run beside this one, "
                                                        "interleaved call by call")
    args = parser.parse_args()
    started = time.perf_counter()
    results = anyio.run(run, args.calls, args.mode, args.vector_backend, args.before)
    for name, timings in results.items():
        print(f"memory_crud over stdio ({name}), mode={args.mode}, vector_backend={args.vector_backend}, "
              f"{args.calls} calls per operation")
        table(timings)
    print(f"run {time.perf_counter() - started:.0f} s, load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
