"""Cold start and stop over stdio: `agent-memory serve` beside a bare MCP server on the same SDK.

    python tests/bench/bench_cold_start.py [--runs 15] [--idle 1.5]

The bare server is a minimal `MCPServer` script with one tool, started the same way (this
interpreter, its script as argument) as ours (`python -m agent_memory serve` on one data directory,
as a host restarting it finds its store; the default vector backend). Both get this environment
without PYTHONDONTWRITEBYTECODE, so the uncounted first run leaves compiled bytecode behind as an
installed package has it (a source tree's stale bytecode is otherwise recompiled at every start).
Runs alternate between the two so that drift on a shared machine hits both alike. Each run
measures, with a hand-written legacy (2025-11-25) client on the pipes (no client library in the timing):

- start: spawn -> `initialize` answered -> `tools/list` answered (what a host waits for);
- then, after `--idle` seconds without requests, the stop: SIGTERM, SIGINT or stdin closed (in turn)
  -> the process has exited (a host such as Claude Code sends SIGINT/SIGTERM and kills the server
  about 0.5 s later).

Prints the median (and p90) per server and the ratio ours/bare; targets: start within 1.15x, each stop
under 200 ms. Every stdout line must be a JSON-RPC message (else the run fails).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BARE = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def noop() -> str:
    """Does nothing."""
    return "ok"


server.run()
'''
STOPS = ("SIGTERM", "SIGINT", "stdin")
STOP_LIMIT = 3.0  # seconds after a stop before the process is killed and counted as hung
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "bench_cold_start", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Pipe:
    """Reads whole lines from the child's stdout with a deadline."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc, self.buffer = proc, b""
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self, request_id: int, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)  # stdout carries JSON-RPC only
                if message.get("id") == request_id:
                    if "error" in message:
                        raise RuntimeError(f"request {request_id} failed: {message['error']}")
                    return message
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise TimeoutError(f"no answer to request {request_id}")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                raise RuntimeError(f"stdout closed before the answer to {request_id}; exit {self.proc.wait()}")
            self.buffer += chunk


def one_run(command: list[str], env: dict[str, str], stop: str, idle: float, log: Path) -> tuple[float, float | None]:
    """(ms from spawn to tools/list answered, ms from the stop to the process's exit; None when it
    had not exited STOP_LIMIT seconds after the stop and was killed, as a host would)."""
    with open(log, "ab") as errlog:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, env=env)
        try:
            pipe = Pipe(proc)
            pipe.send(INITIALIZE)
            pipe.answer(1)
            pipe.send(INITIALIZED)
            pipe.send(TOOLS_LIST)
            tools = pipe.answer(2)["result"]["tools"]
            start_ms = (time.perf_counter() - started) * 1000
            assert tools, "no tools listed"
            time.sleep(idle)
            stopped = time.perf_counter()
            if stop == "stdin":
                assert proc.stdin is not None
                proc.stdin.close()
            else:
                proc.send_signal(getattr(signal, stop))
            try:
                code = proc.wait(timeout=STOP_LIMIT)
            except subprocess.TimeoutExpired:
                return start_ms, None
            stop_ms = (time.perf_counter() - stopped) * 1000
            rest = proc.stdout.read() if proc.stdout else b""
            for line in (pipe.buffer + rest).splitlines():
                json.loads(line)  # nothing but JSON-RPC on stdout, to the end
            if code not in (0, -signal.SIGTERM, -signal.SIGINT, 128 + signal.SIGINT, 128 + signal.SIGTERM):
                raise RuntimeError(f"{command[-1]} exited {code} after {stop} (see {log})")
            return start_ms, stop_ms
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None and not stream.closed:
                    try:
                        stream.close()
                    except BrokenPipeError:
                        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15, help="runs per server (default 15)")
    parser.add_argument("--idle", type=float, default=1.5,
                        help="seconds without requests between tools/list and the stop (default 1.5)")
    parser.add_argument("--before", metavar="DIR",
                        help="also run the server from another source tree (a checkout's root, e.g. "
                             "`git archive HEAD~1 server | tar -x -C DIR`) as `before`, side by side")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cold-"))
    bare_script = work / "bare_server.py"
    bare_script.write_text(BARE)
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_") and k != "PYTHONDONTWRITEBYTECODE"}
    base.update({"MEMORY_AGENT_ID": "bench", "MEMORY_TEAM": "bench", "MEMORY_DATA_DIR": str(work / "data")})
    servers = {"bare": [sys.executable, str(bare_script)],
               "ours": [sys.executable, "-m", "agent_memory", "serve"]}
    envs = {name: base for name in servers}
    if args.before:
        servers["before"] = servers["ours"]
        envs["before"] = {**base, "MEMORY_DATA_DIR": str(work / "data-before"),
                          "PYTHONPATH": os.pathsep.join([str(Path(args.before).resolve() / "server"),
                                                         *filter(None, [base.get("PYTHONPATH")])])}
    starts: dict[str, list[float]] = {name: [] for name in servers}
    stops: dict[str, dict[str, list[float | None]]] = {name: {stop: [] for stop in STOPS} for name in servers}
    for i in range(args.runs + 1):  # run 0 warms the file cache and is not counted
        stop = STOPS[i % len(STOPS)]
        for name in (list(servers) if i % 2 else list(reversed(servers))):
            start_ms, stop_ms = one_run(servers[name], envs[name], stop, args.idle, work / f"{name}.log")
            if i:
                starts[name].append(start_ms)
                stops[name][stop].append(stop_ms)
    print(f"stdio cold start, {args.runs} runs each, interleaved; python {sys.version.split()[0]}; logs in {work}")
    bare = statistics.median(starts["bare"])
    print("spawn -> initialize -> tools/list answered, ms (target: ours/bare <= 1.15):")
    for name, values in starts.items():
        print(f"  {name:<7} p50 {statistics.median(values):7.1f}  p90 {percentile(values, 0.9):7.1f}  "
              f"min {min(values):7.1f}  ratio p50/bare {statistics.median(values) / bare:5.2f}")
    print(f"stop -> exit after {args.idle:g} s idle, ms (p50 / max; hung: not exited {STOP_LIMIT:g} s after the stop, "
          "then killed; target < 200 ms):")
    for stop in STOPS:
        row = [f"  {stop:<8}"]
        for name in servers:
            done = [v for v in stops[name][stop] if v is not None]
            hung = len(stops[name][stop]) - len(done)
            figures = f"{statistics.median(done):7.1f} / {max(done):7.1f}" if done else f"{'-':>7} / {'-':>7}"
            row.append(f"{name} {figures}  hung {hung}/{len(stops[name][stop])}")
            row.append("   ")
        print("".join(row))

if __name__ == "__main__":
    main()
