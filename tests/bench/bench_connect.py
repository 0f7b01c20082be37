"""How fast the real Claude Code CLI connects to this server, and whether it keeps the tools.

    .venv/bin/python tests/bench/bench_connect.py [--runs 20] [--hog] [--compare DIR]

A scratch project and HOME, `agent-memory setup claude-code --write` (server and hooks, as a user
installs them), a stand-in model API on 127.0.0.1 (tests/e2e/model_standin.py), then `claude -p`
RUNS times with `--debug-file`. Per run: the CLI's own "Successfully connected ... in N ms" for
the server (connect), the wall time of the whole `claude -p`, and whether the model's request
named the server's tools (`mcp__agent-memory__memory_retrieve`). `--hog`: another process keeps
one of the cores busy the whole time. `--compare DIR`: the same runs first with the package of
another checkout (`DIR/server`, run as `python -m agent_memory`), side by side in one run.

Needs the pinned CLI (installed into the test cache by tests/npm_cache.py on first use).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.e2e.model_standin import StandIn, model_standin  # noqa: E402
from tests.npm_cache import node_script  # noqa: E402

CLAUDE = "@anthropic-ai/claude-code@2.1.332"
QUIET = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
         "DISABLE_ERROR_REPORTING": "1", "ANTHROPIC_API_KEY": "dummy"}
CONNECTED = re.compile(r'MCP server "agent-memory": Successfully connected \(transport: stdio\) in (\d+)ms')
TOOL = "mcp__agent-memory__memory_retrieve"


def _spin() -> None:
    while True:
        pass


def series(claude: str, package: Path | None, runs: int, scratch: Path) -> tuple[list[float], list[float], int, int]:
    """(connect ms of each run that connected, wall s of each run, runs whose request named the tools,
    runs whose debug log reports a failed or timed-out connection)."""
    project, home, data = scratch / "project", scratch / "home", scratch / "data"
    for path in (project / ".git", home, data):
        path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(home), "MEMORY_DATA_DIR": str(data), "XDG_RUNTIME_DIR": str(scratch / "run")}
    (scratch / "run").mkdir(mode=0o700, exist_ok=True)
    setup = [sys.executable, "-m", "agent_memory"] if package else [str(Path(sys.executable).parent / "agent-memory")]
    if package:
        env["PYTHONPATH"] = str(package / "server")
    done = subprocess.run([*setup, "setup", "claude-code", "--write"], cwd=project, env=env, capture_output=True,
                          text=True, timeout=60)
    if done.returncode != 0:
        raise SystemExit(f"setup failed: {done.stderr}")
    if package:  # the files name the installed script: run the other checkout's package instead
        script = str(Path(sys.executable).parent / "agent-memory")
        for written in (project / ".mcp.json", project / ".claude" / "settings.json"):
            text = written.read_text().replace(f'"command": "{script}",\n      "args": [',
                                               f'"command": "{sys.executable}",\n      "args": ["-m", "agent_memory",')
            written.write_text(text.replace(f"{script} hook", f"{sys.executable} -m agent_memory hook"))
    with model_standin() as (standin, port):
        try:
            return _runs(claude, project, scratch, {**env, **QUIET, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"},
                         standin, runs)
        finally:
            stop_helpers(scratch / "run")


def _runs(claude: str, project: Path, scratch: Path, run_env: dict[str, str], standin: StandIn, runs: int
          ) -> tuple[list[float], list[float], int, int]:
    connects: list[float] = []
    walls: list[float] = []
    tools = failed = 0
    for n in range(runs):
        debug = scratch / f"debug-{n}.txt"
        before = len(standin.requests)
        started = time.monotonic()
        subprocess.run([claude, "-p", "hi", "--debug-file", str(debug)], cwd=project, env=run_env,
                       capture_output=True, text=True, timeout=180)
        walls.append(time.monotonic() - started)
        text = debug.read_text(errors="replace") if debug.exists() else ""
        if found := CONNECTED.search(text):
            connects.append(float(found.group(1)))
        if re.search(r'agent-memory".*(?:[Ff]ailed|timed out|rejected)', text):
            failed += 1
        named = any(TOOL in json.dumps(r) for r in standin.since(before))
        tools += named
        if not named:
            print(f"  run {n}: the request did not name the tools ({debug})", file=sys.stderr)
            (scratch / f"requests-{n}.json").write_text(json.dumps(standin.since(before)))
    return connects, walls, tools, failed


def stop_helpers(runtime: Path) -> None:
    """End the hook helpers this run started (pid in their `.lock` file)."""
    for lock in (runtime / "agent-memory").glob("*.lock"):
        try:
            os.kill(int(lock.read_text().split()[0]), signal.SIGTERM)
        except (OSError, ValueError, IndexError):
            pass


def report(name: str, runs: int, connects: list[float], walls: list[float], tools: int, failed: int) -> None:
    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")

    print(f"{name}: connect p50 {pct(connects, 0.5):.0f} ms, p95 {pct(connects, 0.95):.0f} ms "
          f"({len(connects)}/{runs} connected); claude -p wall p50 {statistics.median(walls):.2f} s; "
          f"tools in the request {tools}/{runs}; connection failures logged {failed}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--hog", action="store_true", help="keep one core busy in another process")
    parser.add_argument("--compare", type=Path, help="another checkout to measure first, side by side")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directories (debug logs) and say where")
    options = parser.parse_args()
    found, why = node_script(CLAUDE, "node_modules/.bin/claude")
    if found is None:
        print(f"the Claude Code CLI is not available: {why}", file=sys.stderr)
        return 2
    hog = multiprocessing.Process(target=_spin, daemon=True) if options.hog else None
    if hog:
        hog.start()
    try:
        print(f"{options.runs} runs of claude -p, {'one core kept busy by another process' if hog else 'quiet'}")
        for name, package in ((f"other ({options.compare})", options.compare), ("this checkout", None)):
            if name.startswith("other") and package is None:
                continue
            scratch = Path(tempfile.mkdtemp(prefix="bench-connect-"))
            try:
                report(name, options.runs, *series(found[1], package, options.runs, scratch))
            finally:
                if options.keep:
                    print(f"  kept {scratch}")
                else:
                    shutil.rmtree(scratch, ignore_errors=True)
    finally:
        if hog:
            hog.terminate()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
