"""UserPromptSubmit recall in the real Claude Code CLI: the command hook vs a hook of type mcp_tool.

    .venv/bin/python tests/bench/bench_hook_designs.py [--entries 2000] [--runs 8] [--keep]

The pinned CLI (tests.npm_cache, @anthropic-ai/claude-code@2.1.332) runs `claude -p PROMPT` against
the stand-in model API (tests/e2e/model_standin.py, 127.0.0.1, records each request), with a
scratch HOME, a short private XDG_RUNTIME_DIR and the quiet variables of /work/shared/HOSTS.md.
One store (MEMORY_DATA_DIR, chroma vectors) is filled with N memories (`agent-memory import --from
notes` into dev/shop-api: LoCoMo dev turns recombined, else synthetic text, plus a few project
facts the prompt is about) and the vector index is left to settle (vector_outbox empty). Then, in
one run, interleaved round-robin so drift on a shared machine hits all alike, one project folder
per design (all named `shop-api`, so all read the same namespace):

  baseline        no hook, no .mcp.json
  baseline+mcp    no hook, .mcp.json with the `agent-memory serve` server
  command         UserPromptSubmit hook `<venv>/bin/agent-memory hook claude-code --agent-id dev
                  --team red` (timeout 5), no .mcp.json; the hook helper warmed by one event first
  command+mcp     the same plus .mcp.json (what `agent-memory setup claude-code` writes)
  mcp_tool        UserPromptSubmit hook {"type": "mcp_tool", "server": "agent-memory", "tool":
                  "memory_retrieve", "input": {"query": "${prompt}", "max_chars": 1200}}, with .mcp.json

Printed per design: p50/p95 of the whole `claude -p` wall time; from `--debug-file`, the hook's own
duration where the log shows its start and end (first and last UserPromptSubmit/mcp_tool hook line)
and, for the MCP designs, when the server connected; whether the request to the model carried a hook
block ("hook additional context" / "hook success") and the stored word.
The hook helper daemon is stopped at the end (pid in the runtime dir's `*.lock`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.e2e.model_standin import model_standin  # noqa: E402
from tests.npm_cache import node_script  # noqa: E402

CLAUDE = "@anthropic-ai/claude-code@2.1.332"
VENV_BIN = Path(sys.executable).parent
AGENT_MEMORY = str(VENV_BIN / "agent-memory")
QUIET = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
         "DISABLE_ERROR_REPORTING": "1", "ANTHROPIC_API_KEY": "dummy"}
PROJECT = "shop-api"
FACTS = [
    "We decided to deploy the shop API only on Tuesdays, never on Fridays.",
    "The shop API's deploys go through the blue-green pipeline in the release-train repository.",
    "I prefer tabs over spaces for indentation in Go files.",
    "The shop API's staging database is refreshed from production every Monday night.",
]
PROMPT = "On which weekday may I deploy the shop API?"
STORED_WORD = "Tuesdays"
DESIGNS = ("baseline", "baseline+mcp", "command", "command+mcp", "mcp_tool")
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?)")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def spread(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"p50 {pct(values, .5):7.0f} ms  p95 {pct(values, .95):7.0f} ms  (n={len(values)})"


def filler(n: int, rng: random.Random) -> list[str]:
    locomo = Path(os.environ.get("AGENT_MEMORY_LOCOMO") or ROOT.parent / "shared" / "data" / "locomo" / "dev")
    pool: list[str] = []
    if locomo.is_dir():
        for mem in sorted(locomo.glob("*/memories.jsonl")):
            pool += [json.loads(line)["text"] for line in mem.read_text().splitlines() if line.strip()]
    if not pool:
        words = ("build cache test deploy review meeting lunch garden travel book music coffee report budget "
                 "invoice server client python rust docker kernel painting hiking camera recipe").split()
        pool = [" ".join(rng.choice(words) for _ in range(12)) + "." for _ in range(500)]
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < n:
        text = f"{rng.choice(pool)} {rng.choice(pool)}"
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def db_count(db: Path, sql: str) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        return conn.execute(sql).fetchone()[0]


def stamp(line: str) -> float | None:
    m = _STAMP.match(line)
    if not m:
        return None
    return datetime.fromisoformat(m.group(1).replace("Z", "+00:00")).timestamp()


def read_debug(path: Path) -> dict:
    """What the debug log tells (ms): `hook` the UserPromptSubmit hook itself (a command hook: the
    CLI's own "finished with status N (X ms)"; mcp_tool: from "mcp_tool calling" to the next
    "Hook UserPromptSubmit" line), `submit` the CLI's whole prompt.submit phase ("prompt.submit
    settled in X ms", the wait for the MCP server included), `connect` the MCP server's "Successfully
    connected ... in X ms", `to_request` from the log's first line to "[API REQUEST]", `shutdown`
    from the CLI's SIGINT to the server until its stdio closed, `span` the log's first to last line;
    whether the CLI had to SIGKILL the server, and whether it said the hook's JSON keys were ignored."""
    out: dict = {"hook": None, "submit": None, "connect": None, "to_request": None, "shutdown": None,
                 "span": None, "ignored": False, "kill": False, "lines": []}
    if not path.exists():
        return out
    lines = path.read_text(errors="replace").splitlines()
    stamps = [t for t in map(stamp, lines) if t is not None]
    if stamps:
        out["span"] = (stamps[-1] - stamps[0]) * 1000
    calling = sigint = None
    for line in lines:
        if "Hooks:" in line or "Hook UserPromptSubmit" in line or "hook JSON" in line or "Hook JSON" in line:
            out["lines"].append(line)
        if m := re.search(r"Hooks: UserPromptSubmit \[.*\] finished with status \S+ \((\d+)ms\)", line):
            out["hook"] = float(m.group(1))
        elif "mcp_tool calling" in line:
            calling = stamp(line)
        elif calling is not None and out["hook"] is None and "Hook UserPromptSubmit" in line and stamp(line):
            out["hook"] = (stamp(line) - calling) * 1000
        if m := re.search(r"prompt\.submit settled in ([\d.]+)ms", line):
            out["submit"] = float(m.group(1))
        if m := re.search(r'MCP server "agent-memory": Successfully connected.* in (\d+)\s*ms', line):
            out["connect"] = float(m.group(1))
        if "[API REQUEST]" in line and out["to_request"] is None and stamps and stamp(line):
            out["to_request"] = (stamp(line) - stamps[0]) * 1000
        if 'MCP server "agent-memory": Sending SIGINT' in line:
            sigint = stamp(line)
        if sigint is not None and 'MCP server "agent-memory": STDIO connection closed' in line and stamp(line):
            out["shutdown"] = (stamp(line) - sigint) * 1000
        if 'MCP server "agent-memory": SIGTERM failed, sending SIGKILL' in line:
            out["kill"] = True
        if "unrecognized keys (ignored)" in line:
            out["ignored"] = True
    return out


def stop_helpers(runtime: Path) -> list[int]:
    stopped = []
    for lock in runtime.rglob("*.lock"):
        text = lock.read_text().strip()
        if not text.isdigit():
            continue
        pid = int(text)
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        stopped.append(pid)
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            os.kill(pid, signal.SIGKILL)
    return stopped


def make_project(work: Path, design: str, mem_env: dict[str, str]) -> Path:
    project = work / design.replace("+", "_") / PROJECT
    (project / ".git").mkdir(parents=True)
    (project / ".claude").mkdir()
    settings: dict = {}
    hook = None
    if design.startswith("command"):
        hook = {"type": "command", "command": f"{AGENT_MEMORY} hook claude-code --agent-id dev --team red",
                "timeout": 5}
    elif design == "mcp_tool":
        hook = {"type": "mcp_tool", "server": "agent-memory", "tool": "memory_retrieve",
                "input": {"query": "${prompt}", "max_chars": 1200}, "timeout": 5}
    if hook:
        settings["hooks"] = {"UserPromptSubmit": [{"matcher": "", "hooks": [hook]}]}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    if design.endswith("mcp") or design == "mcp_tool":
        (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"agent-memory": {
            "type": "stdio", "command": AGENT_MEMORY, "args": ["serve", "--agent-id", "dev", "--team", "red"],
            "env": mem_env}}}, indent=2))
    return project


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--designs", nargs="+", choices=DESIGNS, default=list(DESIGNS))
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (debug logs) and print it")
    parser.add_argument("--show-log", action="store_true", help="print the hook lines of one debug log per design")
    args = parser.parse_args()

    found, why = node_script(CLAUDE, "node_modules/.bin/claude")
    if found is None:
        sys.exit(f"no Claude Code CLI: {why}")
    claude = found[1]
    version = subprocess.run([claude, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()

    work = Path(tempfile.mkdtemp(prefix="bench-hook-designs-"))
    runtime = Path(tempfile.mkdtemp(prefix="amd-"))  # short: a Unix socket path is limited
    os.chmod(runtime, 0o700)
    home = work / "home"
    home.mkdir()
    data = work / "data"
    mem_env = {"MEMORY_DATA_DIR": str(data), "MEMORY_RATE_LIMIT_PER_SECOND": "0",
               "MEMORY_MAX_ENTRIES_PER_NAMESPACE": str(max(10_000, args.entries * 2)),
               "MEMORY_HOOK_IDLE_MINUTES": "30"}
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "ANTHROPIC_", "CLAUDE"))}
    env = {**base, **mem_env, "HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    try:
        # 1. the store
        rng = random.Random(7)
        texts = filler(max(0, args.entries - len(FACTS)), rng) + FACTS
        rng.shuffle(texts)
        notes = work / "notes.jsonl"
        notes.write_text("".join(json.dumps({"content": t, "layer": "long_term"}) + "\n" for t in texts))
        t0 = time.perf_counter()
        done = subprocess.run([AGENT_MEMORY, "import", "--from", "notes", "--scope", "agent", "--namespace",
                               f"dev/{PROJECT}", "--agent-id", "dev", "--team", "red", "--layer", "long_term",
                               str(notes)], env=env, capture_output=True, text=True, timeout=3600)
        if done.returncode:
            sys.exit(f"import failed: {done.stderr[-2000:]}")
        import_s = time.perf_counter() - t0
        db = next(data.rglob("*.db"), None) or next(data.rglob("*.sqlite*"))
        # 2. the helper: started and warmed by one event; it indexes the outbox, wait for it
        warm_project = make_project(work, "warm", mem_env)
        event = {"session_id": "warm", "transcript_path": str(warm_project / "none.jsonl"), "cwd": str(warm_project),
                 "hook_event_name": "UserPromptSubmit", "prompt": PROMPT, "prompt_id": "warm",
                 "permission_mode": "default"}
        hook_cmd = [AGENT_MEMORY, "hook", "claude-code", "--agent-id", "dev", "--team", "red"]

        def warm() -> subprocess.CompletedProcess[str]:
            return subprocess.run(hook_cmd, input=json.dumps(event), env={**env, "MEMORY_HOOK_TIME_LIMIT": "60"},
                                  capture_output=True, text=True, timeout=120, cwd=warm_project)

        t0 = time.perf_counter()
        warm()
        last = time.perf_counter()
        while (left := db_count(db, "SELECT COUNT(*) FROM vector_outbox")):
            if time.perf_counter() - last > 60:
                warm()
                last = time.perf_counter()
            print(f"  indexing: {left} left", file=sys.stderr)
            time.sleep(3)
        settle_s = time.perf_counter() - t0
        warmed = warm()
        total = db_count(db, "SELECT COUNT(*) FROM entries")
        print(f"Claude Code {version}; store: {total} entries ({args.entries} asked), imported in {import_s:.1f} s, "
              f"vector index settled {settle_s:.1f} s later; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
        print(f"warm hook answer ({len(warmed.stdout)} chars) holds {STORED_WORD!r}: {STORED_WORD in warmed.stdout}")
        print(f"prompt: {PROMPT!r}; {args.runs} timed runs per design (+1 untimed warm-up), interleaved\n")

        projects = {d: make_project(work, d, mem_env) for d in args.designs}
        walls: dict[str, list[float]] = {d: [] for d in args.designs}
        KEYS = ("hook", "submit", "connect", "to_request", "shutdown", "span")
        logged: dict[str, dict[str, list[float]]] = {d: {k: [] for k in KEYS} for d in args.designs}
        reached: dict[str, list[tuple[bool, bool, bool]]] = {d: [] for d in args.designs}
        ignored: dict[str, int] = {d: 0 for d in args.designs}
        killed: dict[str, int] = {d: 0 for d in args.designs}
        failures: dict[str, list[str]] = {d: [] for d in args.designs}
        sample_logs: dict[str, Path] = {}
        with model_standin() as (standin, port):
            run_env = {**env, **QUIET, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"}
            for n in range(args.runs + 1):
                for design in args.designs:
                    log = work / "logs" / f"{design.replace('+', '_')}-{n}.log"
                    log.parent.mkdir(exist_ok=True)
                    before = len(standin.requests)
                    t0 = time.perf_counter()
                    done = subprocess.run([claude, "-p", PROMPT, "--debug-file", str(log)], cwd=projects[design],
                                          capture_output=True, text=True, env=run_env, timeout=180)
                    wall = (time.perf_counter() - t0) * 1000
                    if done.returncode != 0 or "Noted." not in done.stdout:
                        failures[design].append(f"rc {done.returncode}: {(done.stdout + done.stderr)[-300:]}")
                    said = "\n".join(json.dumps(r.get("messages", [])) + json.dumps(r.get("system", ""))
                                     for r in standin.since(before))
                    info = read_debug(log)
                    if n == 0:
                        sample_logs[design] = log
                        continue
                    walls[design].append(wall)
                    for key in KEYS:
                        if info[key] is not None:
                            logged[design][key].append(info[key])
                    ignored[design] += info["ignored"]
                    killed[design] += info["kill"]
                    reached[design].append(("UserPromptSubmit hook additional context" in said,
                                            "UserPromptSubmit hook success" in said, STORED_WORD in said))
        print(f"{'design':<14} claude -p wall time")
        for d in args.designs:
            print(f"  {d:<14} {spread(walls[d])}")
        titles = {"hook": "the UserPromptSubmit hook itself (command: CLI's 'finished ... (X ms)'; "
                          "mcp_tool: 'mcp_tool calling' .. 'Hook UserPromptSubmit success')",
                  "submit": "the CLI's prompt.submit phase ('prompt.submit settled in X ms')",
                  "connect": "MCP server 'Successfully connected ... in X ms'",
                  "to_request": "debug log's first line .. '[API REQUEST]' (the model asked)",
                  "shutdown": "MCP server shutdown at exit: CLI's SIGINT .. 'STDIO connection closed'",
                  "span": "debug log's first .. last line"}
        for key, title in titles.items():
            print(f"\nfrom --debug-file: {title}")
            for d in args.designs:
                if logged[d][key]:
                    print(f"  {d:<14} {spread(logged[d][key])}"
                          + (f"   SIGKILL needed in {killed[d]}/{len(walls[d])} runs" if key == "shutdown" else ""))
        base_p50 = pct(walls[args.designs[0]], .5)
        print(f"\nadded p50 wall vs {args.designs[0]}: " + ", ".join(
            f"{d} {pct(walls[d], .5) - base_p50:+.0f} ms" for d in args.designs[1:]))
        print("\nwhat reached the model (runs with: additional context / hook success text / the stored word "
              f"{STORED_WORD!r}):")
        for d in args.designs:
            r = reached[d]
            print(f"  {d:<14} {sum(a for a, _, _ in r)}/{len(r)}  {sum(b for _, b, _ in r)}/{len(r)}  "
                  f"{sum(c for _, _, c in r)}/{len(r)}   debug log says ignored/unrecognised: {ignored[d]}/{len(r)}"
                  + (f"   FAILURES {len(failures[d])}: {failures[d][0]}" if failures[d] else ""))
        if args.show_log:
            for d, log in sample_logs.items():
                info = read_debug(log)
                print(f"\n--- {d}: hook lines of {log.name}")
                for line in info["lines"][:12]:
                    print("   ", line[:200])
    finally:
        stopped = stop_helpers(runtime)
        print(f"\nhook helper stopped: pids {stopped}")
        shutil.rmtree(runtime, ignore_errors=True)
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
