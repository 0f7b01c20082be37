"""`agent-memory hook claude-code` replayed on LoCoMo dev as Claude Code would drive it.

    .venv/bin/python tests/bench/bench_hooks.py [--conversations K] [--entries N] [--offtopic Q]
                                                [--strip-speaker] [--end-each-session] [--keep]

Needs the LoCoMo dev set (not in this repository): `--data DIR` or `AGENT_MEMORY_LOCOMO=DIR`, see
tests/bench/locomo_data.py; without it the script says so and exits 2.

Everything goes through the real hook command, one subprocess per event as the host runs it
(`<venv>/bin/agent-memory hook claude-code`, event JSON on stdin), against a fresh store in a
private temp dir (MEMORY_DATA_DIR, XDG_RUNTIME_DIR for the helper's socket):

- capture: each conversation is its own project (a folder named after it, with a `.git`); each
  LoCoMo session is written as a Claude Code transcript JSONL (the conversation's first speaker is
  the user, the other the assistant; text lines timestamped from the session date) and followed
  by one Stop event; after the last session a SessionEnd (or one after every session with
  --end-each-session).
- recall: a SessionStart, then every question of the conversation as a UserPromptSubmit in its
  project. A question counts as recalled when the injected block holds one of its evidence turns:
  an entry of the block contains the turn's first 40 characters (whitespace and case folded), or
  holds >= 60 % of the turn's word tokens (so compressed / cut entries count).
- off-topic: Q questions of other conversations sent into this conversation's project, and Q into
  an empty project of the same agent; printed: the share that got any block at all.
- latency: wall time of each hook subprocess (process start included), p50/p95 per event, with
  the helper warm; cold = the helper not running (killed), so the hook spawns it and waits.
- --entries N: afterwards, the first conversation's project is filled up to N memories in all
  (`agent-memory import --from notes`, recombined turns of the other conversations), the vector
  index is left to settle (vector_outbox empty), and its questions are asked again: p50/p95
  (target: p50 <= 150 ms, p95 <= 300 ms) and recall among the filler.

The helper daemons started here are killed at the end (pid from their `.lock` file).
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
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_data import locomo_dir  # noqa: E402

# The installed command; AGENT_MEMORY_BENCH_PYTHONPATH=DIR/server runs another checkout's package
# instead (`python -m agent_memory`, whose entry point every checkout has), to compare two versions.
OTHER = os.environ.get("AGENT_MEMORY_BENCH_PYTHONPATH")
AGENT_MEMORY = [sys.executable, "-m", "agent_memory"] if OTHER else [str(Path(sys.executable).parent / "agent-memory")]
HOOK = [*AGENT_MEMORY, "hook", "claude-code"]
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
PREFIX_CHARS = 40
OVERLAP = 0.6
_TOKEN = re.compile(r"\w+")
_SPEAKER = re.compile(r"^[^:\n]{1,40}:\s*")


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def norm(text: str) -> str:
    return " ".join(text.split()).lower()


def tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(text.lower()))


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class Hooks:
    """Runs the hook command with the bench's environment and keeps every wall time."""

    def __init__(self, env: dict[str, str], runtime: Path) -> None:
        self.env = env
        self.runtime = runtime
        self.times: dict[str, list[float]] = defaultdict(list)
        self.notes: dict[str, int] = defaultdict(int)

    def run(self, event: dict, label: str | None = None, cwd: str | None = None) -> tuple[str, float]:
        """(additionalContext or "", wall ms)."""
        started = time.perf_counter()
        done = subprocess.run(HOOK, input=json.dumps(event).encode(), capture_output=True, env=self.env,
                              cwd=cwd or event.get("cwd"), timeout=60)
        wall = (time.perf_counter() - started) * 1000
        if label is not None:
            self.times[label].append(wall)
        for line in done.stderr.decode(errors="replace").splitlines():
            if line.strip():
                self.notes[line.strip()[:160]] += 1
        out = done.stdout.decode()
        if not out.strip():
            return "", wall
        data = json.loads(out)
        return str(data["hookSpecificOutput"].get("additionalContext") or ""), wall

    def helper_pids(self) -> list[int]:
        pids = []
        for lock in (self.runtime / "agent-memory").glob("*.lock"):
            try:
                pid = int(lock.read_text().split()[0])
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except (OSError, ValueError, IndexError):
                continue
            if "agent_memory.hooks.daemon" in cmdline and str(self.runtime) in cmdline:
                pids.append(pid)
        return pids

    def kill_helpers(self) -> None:
        for pid in self.helper_pids():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            for _ in range(100):
                if not Path(f"/proc/{pid}").exists():
                    break
                time.sleep(0.05)
            else:
                os.kill(pid, signal.SIGKILL)


def sweep_floors(hooks: Hooks, convs: list, every: list, args: argparse.Namespace, project_of: Any
                 ) -> list[tuple[float, float, float, float]]:
    """(hook_min_score, evidence share, mean injected chars, off-topic share) per value of --sweep:
    the same questions (and the same off-topic sample, by seed) asked again with that floor."""
    curve = []
    for floor in (float(v) for v in args.sweep.split(",") if v.strip()):
        hooks.env = {**hooks.env, "MEMORY_HOOK_MIN_SCORE": str(floor)}  # another helper (its key is its env)
        rng = random.Random(7)
        rows: list[dict] = []
        off: list[bool] = []
        for conv in convs:
            project = project_of(conv.name)
            rows += ask(hooks, conv, project, f"sweep {floor}")
            others = [q["question"] for c in every if c.name != conv.name for q in c.queries]
            for question in rng.sample(others, min(args.offtopic, len(others))):
                block, _ = hooks.run(prompt(project, question), f"sweep {floor}, off-topic")
                off.append(bool(block))
        hooks.kill_helpers()
        curve.append((floor, statistics.mean(r["hit"] for r in rows), statistics.mean(r["chars"] for r in rows),
                      statistics.mean(off) if off else 0.0))
    return curve


def transcript_lines(turns: list[dict], users: str, session_id: str, cwd: str, strip: bool) -> list[str]:
    """One LoCoMo session as Claude Code transcript lines (user / assistant text messages)."""
    base = turns[0]["session_date_iso"]
    start = time.mktime(time.strptime(base, "%Y-%m-%dT%H:%M"))
    lines, parent = [], None
    common = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session_id,
              "version": "2.1.332", "gitBranch": "main"}
    first = {"type": "attachment", "attachment": {"type": "hook_success", "hookName": "SessionStart:startup",
                                                  "content": "", "stdout": "", "stderr": "", "exitCode": 0},
             "uuid": str(uuid.uuid4()), "parentUuid": None, **common,
             "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.localtime(start))}
    lines.append(json.dumps(first))
    parent = first["uuid"]
    for n, turn in enumerate(turns):
        text = _SPEAKER.sub("", turn["text"], count=1) if strip else turn["text"]
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.localtime(start + 20 * n))
        me = str(uuid.uuid4())
        if turn["speaker"] == users:
            record = {"type": "user", "message": {"role": "user", "content": text}, "promptId": str(uuid.uuid4())}
        else:
            record = {"type": "assistant", "requestId": "req_" + me[:8], "message": {
                "id": "msg_" + me.replace("-", "")[:24], "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 10}}}
        lines.append(json.dumps({"parentUuid": parent, **common, **record, "uuid": me, "timestamp": stamp}))
        parent = me
    return lines


def recalled(block: str, evidence_texts: list[str]) -> bool:
    """Whether an entry of the block holds one of the evidence turns (prefix or token overlap)."""
    if not block or not evidence_texts:
        return False
    entries = [norm(e) for e in re.split(r"\n- \[", block)]
    for text in evidence_texts:
        want = norm(text)
        prefix = want[:PREFIX_CHARS]
        need = tokens(text)
        for entry in entries:
            if prefix and prefix in entry:
                return True
            if len(need) >= 4 and len(need & tokens(entry)) / len(need) >= OVERLAP:
                return True
    return False


class Conversation:
    def __init__(self, folder: Path, strip: bool) -> None:
        self.name = folder.name
        self.turns = read_jsonl(folder / "memories.jsonl")
        self.queries = read_jsonl(folder / "queries.jsonl")
        self.text_of = {t["dia_id"]: (_SPEAKER.sub("", t["text"], count=1) if strip else t["text"])
                        for t in self.turns}
        self.sessions: dict[int, list[dict]] = defaultdict(list)
        for turn in self.turns:
            self.sessions[turn["session"]].append(turn)

    def evidence(self, query: dict) -> list[str]:
        return [self.text_of[d] for d in query.get("evidence") or [] if d in self.text_of]


def capture(hooks: Hooks, conv: Conversation, project: Path, claude_home: Path, strip: bool,
            end_each: bool) -> None:
    users = conv.turns[0]["speaker"]
    folder = claude_home / ("-" + str(project).strip("/").replace("/", "-"))
    folder.mkdir(parents=True, exist_ok=True)
    order = sorted(conv.sessions)
    for n, number in enumerate(order):
        session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{conv.name}/{number}"))
        path = folder / f"{session_id}.jsonl"
        path.write_text("\n".join(transcript_lines(conv.sessions[number], users, session_id, str(project),
                                                   strip)) + "\n")
        base = {"session_id": session_id, "transcript_path": str(path), "cwd": str(project)}
        hooks.run({**base, "hook_event_name": "Stop", "stop_hook_active": False,
                   "last_assistant_message": ""}, "Stop")
        if end_each or n == len(order) - 1:
            hooks.run({**base, "hook_event_name": "SessionEnd", "reason": "other"}, "SessionEnd")


def prompt(project: Path, question: str) -> dict:
    return {"session_id": str(uuid.uuid4()), "transcript_path": str(project / "none.jsonl"), "cwd": str(project),
            "hook_event_name": "UserPromptSubmit", "prompt": question, "prompt_id": str(uuid.uuid4()),
            "permission_mode": "default"}


def ask(hooks: Hooks, conv: Conversation, project: Path, label: str, limit: int | None = None) -> list[dict]:
    rows = []
    for query in conv.queries[:limit]:
        evidence = conv.evidence(query)
        block, wall = hooks.run(prompt(project, query["question"]), label)
        rows.append({"question": query["question"], "evidence": evidence, "text": block,
                     "category": query.get("category"), "has_evidence": bool(evidence),
                     "hit": recalled(block, evidence), "chars": len(block), "block": bool(block), "ms": wall})
    return rows


def backlog(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        return conn.execute("SELECT COUNT(*) FROM vector_outbox").fetchone()[0]


def count_entries(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        return conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]


def filler(convs: list[Conversation], n: int, rng: random.Random) -> list[str]:
    """n distinct texts made of two turns of these conversations each."""
    pool = [t["text"] for c in convs for t in c.turns]
    seen: set[str] = set()
    out = []
    while len(out) < n:
        text = f"{rng.choice(pool)} {rng.choice(pool)}"
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def recall_report(title: str, rows: list[dict]) -> None:
    scored = [r for r in rows if r["has_evidence"]]
    print(f"\n{title}")
    print(f"{'category':<13}{'n':>5}{'evidence in block':>19}{'any block':>11}{'mean chars':>12}")
    by: dict = defaultdict(list)
    for r in scored:
        by[r["category"]].append(r)
    for cat in sorted(by, key=lambda c: (c is None, c)):
        group = by[cat]
        print(f"{CATEGORIES.get(cat, str(cat)):<13}{len(group):>5}{statistics.mean(r['hit'] for r in group):>19.3f}"
              f"{statistics.mean(r['block'] for r in group):>11.3f}{statistics.mean(r['chars'] for r in group):>12.0f}")
    if scored:
        print(f"{'overall':<13}{len(scored):>5}{statistics.mean(r['hit'] for r in scored):>19.3f}"
              f"{statistics.mean(r['block'] for r in scored):>11.3f}"
              f"{statistics.mean(r['chars'] for r in scored):>12.0f}")
    with_block = [r["chars"] for r in rows if r["block"]]
    print(f"injected chars per question: mean {statistics.mean(r['chars'] for r in rows):.0f} over all "
          f"{len(rows)} questions, {statistics.mean(with_block) if with_block else 0:.0f} when a block came "
          f"(max {max(with_block) if with_block else 0})")


def latency_report(times: dict[str, list[float]], order: list[str]) -> None:
    print(f"\n{'hook latency (wall ms, subprocess)':<58}{'n':>6}{'p50':>9}{'p95':>9}{'max':>9}")
    for label in order:
        values = times.get(label)
        if values:
            print(f"{label:<58}{len(values):>6}{pct(values, 0.5):>9.0f}{pct(values, 0.95):>9.0f}{max(values):>9.0f}")


def cold_ups(hooks: Hooks, conv: Conversation, project: Path, label: str, repeats: int) -> list[dict]:
    """Kill the helper, then UserPromptSubmit (the first one spawns the helper) again and again as a
    host would, until one gets a block: its wall time, and the seconds from the kill to that block."""
    got = []
    for n in range(repeats):
        hooks.kill_helpers()
        question = conv.queries[n % len(conv.queries)]["question"]
        t0 = time.perf_counter()
        block, _ = hooks.run(prompt(project, question), label)
        first = bool(block)
        tries = 1
        while not block and time.perf_counter() - t0 < 60:
            block, wall = hooks.run(prompt(project, question))
            tries += 1
        if not first and block:
            hooks.times[label.replace("cold helper", "first block after spawn")].append(wall)
        got.append({"cold_block": first, "to_block_s": time.perf_counter() - t0, "tries": tries})
    return got


def cold_line(label: str, got: list[dict]) -> str:
    seconds = ", ".join(f"{g['to_block_s']:.1f}" for g in got)
    tries = ", ".join(str(g["tries"]) for g in got)
    return (f"{label}: {sum(g['cold_block'] for g in got)}/{len(got)} cold UserPromptSubmit got a block (time limit "
            f"3.5 s); first block {seconds} s after the helper was killed (hook calls needed: {tries})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="the LoCoMo dev folder (default: $AGENT_MEMORY_LOCOMO, else "
                                                  "../shared/data/locomo/dev)")
    parser.add_argument("--conversations", type=int, default=0, help="replay only the first K (default: all)")
    parser.add_argument("--offtopic", type=int, default=50,
                        help="off-topic questions per conversation, into its project and into an empty one")
    parser.add_argument("--entries", type=int, default=0,
                        help="then fill the first conversation's project up to N memories and time recall again")
    parser.add_argument("--entries-queries", type=int, default=0, help="questions asked with --entries (0: all)")
    parser.add_argument("--cold", type=int, default=3, help="cold-start UserPromptSubmit measurements")
    parser.add_argument("--strip-speaker", action="store_true", help="drop the 'Name: ' prefix of each turn")
    parser.add_argument("--end-each-session", action="store_true", help="SessionEnd after every session")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (printed)")
    parser.add_argument("--sweep", default="", help="hook_min_score values, comma-separated: afterwards, every "
                        "question and the same off-topic ones asked again with each (the curve to choose from)")
    parser.add_argument("--dump", type=Path, help="write each question, its evidence and its block here (JSONL)")
    args = parser.parse_args()

    data = locomo_dir(args.data)
    folders = sorted(p for p in data.iterdir() if (p / "memories.jsonl").is_file())
    every = [Conversation(f, args.strip_speaker) for f in folders]
    convs = every[:args.conversations] if args.conversations else every
    work = Path(tempfile.mkdtemp(prefix="bh-", dir="/tmp"))
    work.chmod(0o700)
    runtime = work / "rt"
    runtime.mkdir(mode=0o700)
    data_dir = work / "data"
    data_dir.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "CLAUDE"))}
    env.update({"MEMORY_DATA_DIR": str(data_dir), "MEMORY_AGENT_ID": "bench", "MEMORY_TEAM": "benchteam",
                "MEMORY_HOOK_IDLE_MINUTES": "10", "MEMORY_RATE_LIMIT_PER_SECOND": "0",
                "MEMORY_MAX_ENTRIES_PER_NAMESPACE": str(max(100_000, 2 * args.entries)),
                "XDG_RUNTIME_DIR": str(runtime)})
    if OTHER:  # the other checkout's package first, in the hook and in the helper it starts
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [OTHER, env.get("PYTHONPATH")]))
    hooks = Hooks(env, runtime)
    db = data_dir / "memory.db"
    projects = work / "projects"
    claude_home = work / ".claude" / "projects"
    rng = random.Random(7)
    print(f"{len(convs)} conversation(s) ({', '.join(c.name for c in convs)}), {sum(len(c.turns) for c in convs)} "
          f"turns, {sum(len(c.sessions) for c in convs)} sessions, {sum(len(c.queries) for c in convs)} questions; "
          f"store {work}", file=sys.stderr)
    try:
        def project_of(name: str) -> Path:
            path = projects / name
            (path / ".git").mkdir(parents=True, exist_ok=True)
            return path

        # 1. capture; the very first event starts the helper (cold, empty store)
        started = time.perf_counter()
        for n, conv in enumerate(convs):
            if n == 0:
                hooks.times["Stop, cold (first event, empty store)"] = []
            before = len(hooks.times["Stop"])
            capture(hooks, conv, project_of(conv.name), claude_home, args.strip_speaker, args.end_each_session)
            if n == 0:
                hooks.times["Stop, cold (first event, empty store)"].append(hooks.times["Stop"].pop(before))
            print(f"  {conv.name}: {len(conv.sessions)} sessions captured", file=sys.stderr)
        capture_s = time.perf_counter() - started
        entries_after_capture = count_entries(db)
        settle = time.perf_counter()
        while backlog(db):
            time.sleep(0.5)
        settle_s = time.perf_counter() - settle

        # 2. cold start with the store filled
        cold_got = cold_ups(hooks, convs[0], project_of(convs[0].name), "UserPromptSubmit, cold helper", args.cold)

        # 3. recall per conversation, then off-topic
        rows: list[dict] = []
        off_conv: list[bool] = []
        off_empty: list[bool] = []
        empty = project_of("empty-project")
        for conv in convs:
            project = project_of(conv.name)
            block, _ = hooks.run({"session_id": str(uuid.uuid4()), "transcript_path": "", "cwd": str(project),
                                  "hook_event_name": "SessionStart", "source": "startup"}, "SessionStart")
            hooks.times.setdefault("SessionStart chars", []).append(len(block))
            rows += ask(hooks, conv, project, "UserPromptSubmit")
            others = [q["question"] for c in every if c.name != conv.name for q in c.queries]
            for question in rng.sample(others, min(args.offtopic, len(others))):
                block, _ = hooks.run(prompt(project, question), "UserPromptSubmit, off-topic")
                off_conv.append(bool(block))
            for question in rng.sample([q["question"] for q in conv.queries], min(args.offtopic, len(conv.queries))):
                block, _ = hooks.run(prompt(empty, question), "UserPromptSubmit, empty project")
                off_empty.append(bool(block))

        sweep = sweep_floors(hooks, convs, every, args, project_of) if args.sweep else []
        if args.dump:
            args.dump.write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(f"\nhooks bench: LoCoMo dev via `agent-memory hook claude-code`, {len(convs)} conversation(s); "
              f"speaker prefix {'stripped' if args.strip_speaker else 'kept'}; SessionEnd "
              f"{'after every session' if args.end_each_session else 'once per conversation'}")
        print(f"capture: {sum(len(c.sessions) for c in convs)} Stop events in {capture_s:.1f} s -> "
              f"{entries_after_capture} entries; vector index settled {settle_s:.1f} s later")
        recall_report("recall (UserPromptSubmit in the conversation's own project)", rows)
        starts = hooks.times.pop("SessionStart chars", [])
        mean_start = statistics.mean(starts) if starts else 0
        print(f"SessionStart blocks: {sum(1 for s in starts if s)}/{len(starts)} non-empty, "
              f"mean {mean_start:.0f} chars")
        if sweep:
            print("\nthe curve: every question again per hook_min_score (MEMORY_HOOK_MIN_SCORE)")
            print(f"{'min_score':>9}  {'evidence in block':>17}  {'mean chars':>10}  {'off-topic any block':>19}")
            for floor, evidence, chars, off in sweep:
                print(f"{floor:>9.2f}  {evidence:>17.3f}  {chars:>10.0f}  {off:>19.3f}")
        print("\noff-topic injection (share of questions that got any block)")
        if off_conv:
            print("  other conversations' questions in a conversation's project: "
                  f"{statistics.mean(off_conv):.3f} "
                  f"({sum(off_conv)}/{len(off_conv)})")
        if off_empty:
            print("  a conversation's own questions in an empty project (same agent): "
                  f"{statistics.mean(off_empty):.3f} "
                  f"({sum(off_empty)}/{len(off_empty)})")
        print(cold_line("cold helper", cold_got))

        # 4. a big store
        if args.entries:
            conv = convs[0]
            project = project_of(conv.name)
            have = count_entries(db)
            n_fill = max(0, args.entries - have)
            texts = filler([c for c in every if c.name != conv.name] or every, n_fill, rng)
            notes = work / "filler.jsonl"
            notes.write_text("".join(json.dumps({"content": t, "layer": "long_term"}) + "\n" for t in texts))
            t0 = time.perf_counter()
            done = subprocess.run([*AGENT_MEMORY, "import", "--from", "notes", "--scope", "agent", "--namespace",
                                   f"bench/{project.name}", "--agent-id", "bench", "--layer", "long_term",
                                   str(notes)], env=env, capture_output=True, timeout=3600)
            import_s = time.perf_counter() - t0
            if done.returncode:
                sys.exit(f"import failed: {done.stderr.decode()[-2000:]}")
            # the helper indexes the outbox; keep it alive and wait
            t0 = time.perf_counter()
            last_ping = 0.0
            while True:
                if time.perf_counter() - last_ping > 60:
                    hooks.run({"session_id": "warmup", "cwd": str(project), "hook_event_name": "SessionStart",
                               "source": "startup"})
                    last_ping = time.perf_counter()
                left = backlog(db)
                if not left:
                    break
                print(f"  indexing: {left} left", file=sys.stderr)
                time.sleep(5)
            index_s = time.perf_counter() - t0
            total = count_entries(db)
            big_label = f"UserPromptSubmit, {total} entries"
            big = ask(hooks, conv, project, big_label, args.entries_queries or None)
            cold_big = cold_ups(hooks, conv, project, f"UserPromptSubmit, cold helper, {total} entries", 1)
            print(f"\n--entries {args.entries}: imported {n_fill} notes into bench/{project.name} in {import_s:.1f} s, "
                  f"vector index settled {index_s:.1f} s later; store holds {total} entries")
            recall_report(f"recall with {total} entries in {conv.name}'s project", big)
            print(cold_line(f"cold helper with {total} entries", cold_big))
        latency_report(hooks.times, ["Stop, cold (first event, empty store)", "Stop", "SessionEnd", "SessionStart",
                                     "UserPromptSubmit", "UserPromptSubmit, off-topic",
                                     "UserPromptSubmit, empty project", "UserPromptSubmit, cold helper",
                                     "UserPromptSubmit, first block after spawn",
                                     *[k for k in hooks.times
                                       if k.startswith("UserPromptSubmit, ") and "entries" in k]])
        if args.entries:
            v = hooks.times[big_label]
            ok = pct(v, 0.5) <= 150 and pct(v, 0.95) <= 300
            print(f"target p50 <= 150 ms, p95 <= 300 ms with {args.entries} memories: "
                  f"{'met' if ok else 'NOT met'} (p50 {pct(v, 0.5):.0f}, p95 {pct(v, 0.95):.0f})")
        if hooks.notes:
            print("\nhook stderr lines (count):")
            for line, count in sorted(hooks.notes.items(), key=lambda kv: -kv[1])[:10]:
                print(f"  {count:>5}  {line}")
    finally:
        hooks.kill_helpers()
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
