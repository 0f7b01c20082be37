"""What the token revocation check costs a request: the store read every HTTP request makes after
the token verifies (`TokenRegistry.standing`: one statement, two primary-key lookups), on SQLite
and on PostgreSQL (a throwaway PostgreSQL 16 from the `pgserver` binaries, as tests/postgres.py),
with `--tokens` tokens recorded and `--agents` agents revoked, one caller at a time and 8 at once.
Then the whole of an authenticated request for scale: `GET /console/api/whoami` against a real
`agent-memory serve --http` on SQLite (verify, revocation check, audit-free handler), sequentially.

    .venv/bin/python tests/bench/bench_token_check.py [--n 2000] [--tokens 1000] [--agents 100]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent_memory.bootstrap import open_records  # noqa: E402
from agent_memory.config import Settings  # noqa: E402
from agent_memory.core.access.revocation import check_not_revoked, register, revoke_agent  # noqa: E402
from agent_memory.core.access.tokens import mint  # noqa: E402
from agent_memory.core.model.models import Caller, SystemType  # noqa: E402
from tests.postgres import LocalPostgres, pgserver_bin_dir  # noqa: E402

SECRET = b"bench-token-check-secret-0123456789"


def _summary(name: str, took: list[float]) -> None:
    took = sorted(took)
    print(f"{name:<34} mean {statistics.mean(took) * 1e6:7.0f} us   p50 {took[len(took) // 2] * 1e6:7.0f} us   "
          f"p99 {took[int(len(took) * 0.99)] * 1e6:7.0f} us")


async def _bench_store(label: str, settings: Settings, n: int, tokens: int, agents: int) -> None:
    async with open_records(settings) as records:
        registry = records.store.tokens
        now_ms = int(time.time() * 1000)
        claims = []
        for i in range(tokens):
            _, minted = mint(Caller(f"agent-{i % 200}", SystemType.SYS1, "red"), SECRET, now_ms=now_ms + i,
                             ttl_seconds=3600)
            await register(registry, minted, "cli", now_ms=now_ms)
            claims.append(minted)
        for i in range(agents):
            await revoke_agent(registry, f"gone-{i}", now_ms=now_ms)
        took = []
        for i in range(n):
            started = time.perf_counter()
            await check_not_revoked(registry, claims[i % len(claims)])
            took.append(time.perf_counter() - started)
        _summary(f"{label}: one caller", took)

        async def caller(k: int) -> list[float]:
            mine = []
            for i in range(n // 8):
                started = time.perf_counter()
                await check_not_revoked(registry, claims[(k * 31 + i) % len(claims)])
                mine.append(time.perf_counter() - started)
            return mine

        started = time.perf_counter()
        results = await asyncio.gather(*(caller(k) for k in range(8)))
        wall = time.perf_counter() - started
        _summary(f"{label}: 8 callers at once", [t for r in results for t in r])
        print(f"{'':<34} {n // 8 * 8 / wall:7.0f} checks/s")


def _bench_http(n: int) -> None:
    import subprocess

    import httpx

    from tests.e2e.servers import agent_memory_command, free_port, server_env, wait_for_port

    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        port = free_port()
        env = server_env(data, MEMORY_AUTH_SECRET=SECRET.decode(), MEMORY_VECTOR_BACKEND="none",
                         MEMORY_RATE_LIMIT_PER_SECOND="0", MEMORY_LOG_LEVEL="warning")
        token = subprocess.run([agent_memory_command(), "token", "issue", "--agent-id", "bench", "--system-type",
                                "sys3", "--team", "red"], env=env, capture_output=True, text=True, check=True,
                               timeout=60).stdout.strip()
        log = Path(folder) / "server.log"
        with log.open("w") as out:
            proc = subprocess.Popen([agent_memory_command(), "serve", "--http", "--port", str(port)], env=env,
                                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            try:
                wait_for_port(proc, port, log)
                with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
                    url = f"http://127.0.0.1:{port}/console/api/whoami"
                    for _ in range(50):
                        http.get(url)
                    took = []
                    for _ in range(n):
                        started = time.perf_counter()
                        assert http.get(url).status_code == 200
                        took.append(time.perf_counter() - started)
                _summary("HTTP GET whoami (SQLite), whole", took)
            finally:
                proc.terminate()
                proc.wait(timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--agents", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_bench_store("SQLite", Settings(data_dir=folder), args.n, args.tokens, args.agents))
    bin_dir = pgserver_bin_dir()
    if bin_dir is None:
        print("PostgreSQL: skipped (the pgserver wheel is not installed)")
    else:
        server = LocalPostgres(bin_dir, durable=True)
        try:
            server.start()
            settings = Settings(backend="postgres", postgres_url=server.url())
            asyncio.run(_bench_store("PostgreSQL", settings, args.n, args.tokens, args.agents))
        finally:
            server.stop()
    _bench_http(args.n)


if __name__ == "__main__":
    main()
