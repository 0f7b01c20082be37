"""memory_crud over streamable HTTP with 8 concurrent clients.

    python tests/bench/bench_http.py [--clients 8] [--calls 500] [--mode auto|legacy]
                                     [--servers 2] [--backends sqlite postgres]

Starts the real server (`serve --http`, plus the benchmark-only no-op tool) on a loopback port
with a fresh data directory, then runs three phases, each with every client calling
concurrently: `--calls` no-op calls per client, `--calls` creates per client, and `--calls` reads
per client (of that client's own entries). Each client has its own token (agents in two teams).
With `--servers N`, N server processes share the store (one data directory on SQLite, one
database on PostgreSQL) and client i talks to server i mod N; `--backends` runs each store in turn.
Prints throughput (calls/s over the phase) and p50/p95 round trip per phase, and the
create/read ratios to the no-op phase. Client and server share this machine's cores.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from agent_memory.core.access.tokens import issue_token
from agent_memory.core.model.models import Caller, Skill, SystemType

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from pg_bench import bench_postgres  # noqa: E402

SECRET = "bench-http-secret-0123456789abcdef"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def start_server(data_dir: str, store_env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update({"MEMORY_DATA_DIR": data_dir, "MEMORY_AUTH_SECRET": SECRET, "MEMORY_RATE_LIMIT_PER_SECOND": "0",
                **store_env})
    log = open(os.path.join(data_dir, f"server-{port}.log"), "w")
    proc = subprocess.Popen([sys.executable, str(HERE / "bench_server.py"), "--http", "--port", str(port)],
                            env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("server did not start") from None
            time.sleep(0.05)


async def run(urls: list[str], clients: int, calls: int, mode: str) -> dict[str, tuple[list[float], float]]:
    phases: dict[str, tuple[list[float], float]] = {}
    ids: dict[int, list[str]] = {i: [] for i in range(clients)}
    tokens = [issue_token(Caller(f"bench-{i}", SystemType.SYS3, "red" if i % 2 else "blue", frozenset(Skill)),
                          SECRET.encode(), now=int(time.time()), ttl_seconds=3600) for i in range(clients)]

    async def session(i: int, phase: str, latencies: list[float]) -> None:
        rng = random.Random(i)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens[i]}"}, timeout=60) as http, \
                Client(streamable_http_client(urls[i % len(urls)], http_client=http), mode=mode) as client:
            for n in range(calls + 10):
                if phase == "noop":
                    name, args = "bench_noop", {}
                elif phase == "create":
                    name, args = "memory_crud", {"action": "create", "items": [
                        {"content": f"Client {i} memory {n}: deploy service {n % 13} with the blue-green flag"}]}
                else:
                    name, args = "memory_crud", {"action": "read", "items": [{"id": rng.choice(ids[i])}]}
                started = time.perf_counter()
                result = await client.call_tool(name, args)
                elapsed = (time.perf_counter() - started) * 1000
                if result.is_error:
                    raise RuntimeError(f"{phase} failed: {result.structured_content}")
                if n >= 10:  # the first calls of each session warm it up
                    latencies.append(elapsed)
                if phase == "create":
                    ids[i].append(result.structured_content["items"][0]["id"])

    for phase in ("noop", "create", "read"):
        latencies: list[float] = []
        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for i in range(clients):
                tg.start_soon(session, i, phase, latencies)
        phases[phase] = (latencies, time.perf_counter() - started)
    return phases


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--mode", choices=["auto", "legacy"], default="auto")
    parser.add_argument("--servers", type=int, default=1, help="server processes sharing the store")
    parser.add_argument("--backends", nargs="+", choices=["sqlite", "postgres"], default=["sqlite"],
                        help="stores to run in turn (postgres: tests/bench/pg_bench.py's server)")
    args = parser.parse_args()
    with ExitStack() as stack:
        for backend in args.backends:
            store_env = {}
            if backend == "postgres":
                store_env = {"MEMORY_BACKEND": "postgres",
                             "MEMORY_POSTGRES_URL": stack.enter_context(bench_postgres()).create_database()}
            data_dir = tempfile.mkdtemp(prefix="bench-http-")
            servers = [start_server(data_dir, store_env) for _ in range(args.servers)]
            try:
                phases = anyio.run(run, [url for _, url in servers], args.clients, args.calls, args.mode)
            finally:
                for proc, _ in servers:
                    proc.terminate()
                    proc.wait(timeout=15)
            report(phases, args, backend)


def report(phases: dict[str, tuple[list[float], float]], args: argparse.Namespace, backend: str) -> None:
    total = args.clients * (args.calls + 10)
    print(f"memory_crud over streamable HTTP, {backend}, {args.servers} server(s), mode={args.mode}, "
          f"{args.clients} clients x {args.calls} calls")
    print(f"{'phase':<8}{'calls/s':>10}{'p50 ms':>10}{'p95 ms':>10}{'p50/noop':>10}{'tput/noop':>11}")
    noop_p50 = statistics.median(phases["noop"][0])
    noop_rate = total / phases["noop"][1]
    for phase, (latencies, seconds) in phases.items():
        rate = total / seconds
        p50 = statistics.median(latencies)
        print(f"{phase:<8}{rate:>10.0f}{p50:>10.2f}{percentile(latencies, 0.95):>10.2f}"
              f"{p50 / noop_p50:>10.2f}{rate / noop_rate:>11.2f}")


if __name__ == "__main__":
    main()
