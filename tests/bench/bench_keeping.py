"""Nothing said is silently forgotten (issue 37, item 1): LoCoMo dev replayed through the real hook
command, then the session layer expired, then every question asked again.

    .venv/bin/python tests/bench/bench_keeping.py [--conversations K] [--keep]

Needs the LoCoMo dev set (`--data DIR` or `AGENT_MEMORY_LOCOMO=DIR`, see tests/bench/locomo_data.py).

1. Capture exactly as `bench_hooks.py` does: each conversation its own project, each session a
   Claude Code transcript followed by a Stop event, SessionEnd after the last one.
2. Before expiry, each question is asked two ways: `memory_retrieve` (default arguments but
   `limit` 10, `min_score` 0, `namespaces` the conversation's project) through the MCP server
   in this process (an in-memory client), and the hook's UserPromptSubmit block. A question counts
   when one item (or one block entry) holds one of its evidence turns (`bench_hooks.recalled`: the
   turn's first 40 characters, or >= 60 % of its word tokens).
3. Expiry: the hook helpers are stopped, the wall clock passes the retention chosen here, and the
   operator's `agent-memory prune` runs with `MEMORY_RETENTION_SESSION_DAYS` of two seconds (a
   setting, the product's own path: sessions are kept, then their turns deleted).
4. After expiry, the same questions again, both ways.

Printed: the share answered before and after (and their ratio: the target is >= 0.8), the
entries and stored characters per layer before and after, and the prune's wall time.

`--corpus FILE` replays coding-assistant sessions instead (`tests/fixtures/distill_corpus.jsonl`:
labelled sentences worth keeping, each with the 1-3 tokens a memory of it must hold): each
session a Claude Code transcript in its project (user and assistant text, a tool turn as a Bash
call and its output), Stop then SessionEnd. Its questions are the kept sentences less their key
tokens ("the staging db is db-07 on port 6543" asks "the staging db is on port"); one counts
when an item (or block entry) holds every key token. Noise filtering shows in the session turns
stored (turns in the corpus against turns logged).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))
from bench_hooks import AGENT_MEMORY, Conversation, Hooks, backlog, capture, prompt, recalled  # noqa: E402
from locomo_data import locomo_dir  # noqa: E402

RETENTION_SECONDS = 2.0


def layers(db: Path) -> dict[str, tuple[int, int]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        rows = conn.execute("SELECT layer, COUNT(*), COALESCE(SUM(length(content)), 0) FROM entries GROUP BY layer")
        return {layer: (n, chars) for layer, n, chars in rows.fetchall()}


async def retrieve_each(env: dict[str, str], db: Path, questions: list[tuple[Path, str]]) -> list[list[str]]:
    """Each (project directory, question) through memory_retrieve on an in-process server over the
    bench's store, once that server has applied the vector index's queue (the prune's deletions and
    new digests): the contents of the items each got."""
    from mcp import Client

    from agent_memory.config import load_settings
    from agent_memory.logging import configure_logging
    from agent_memory.tools.server import create_server

    configure_logging("warning", "auto")  # on stderr, as the server's own
    environ = {k: v for k, v in env.items() if k.startswith("MEMORY_")}
    settings = load_settings(environ=environ, overrides={"agent_id": "bench", "team": "benchteam"})
    out: list[list[str]] = []
    async with Client(create_server(settings)) as client:
        await client.call_tool("memory_retrieve", {"query": "warm up"})
        while backlog(db):
            await anyio.sleep(0.5)
        for directory, question in questions:
            project = settings.project_in(str(directory), always=True)
            assert project is not None
            result = await client.call_tool("memory_retrieve", {
                "query": question, "limit": 10, "min_score": 0, "namespaces": [f"bench/{project.segment}"],
                "max_chars": 1_000_000, "per_entry_max_chars": 100_000})
            items = (result.structured_content or {}).get("items") or []
            out.append([str(item.get("content", "")) for item in items])
    return out


def retrieve_all(env: dict[str, str], convs: list[Conversation], projects: Path, db: Path) -> list[bool]:
    asked = [(conv, query) for conv in convs for query in conv.queries if conv.evidence(query)]
    got = anyio.run(retrieve_each, env, db, [(projects / conv.name, query["question"]) for conv, query in asked])
    return [recalled("\n- [".join(items), conv.evidence(query))
            for (conv, query), items in zip(asked, got, strict=True)]


def hook_all(hooks: Hooks, convs: list[Conversation], projects: Path) -> list[bool]:
    hits = []
    for conv in convs:
        for query in conv.queries:
            evidence = conv.evidence(query)
            if evidence:
                block, _ = hooks.run(prompt(projects / conv.name, query["question"]), "UserPromptSubmit")
                hits.append(recalled(block, evidence))
    return hits


class Probe:
    """A question of the corpus mode: the sentence less its keys, answered when all keys come back."""

    def __init__(self, question: str, keys: list[str]) -> None:
        self.question, self.keys = question, keys

    def hit(self, text: str) -> bool:
        low = text.lower()
        return all(key.lower() in low for key in self.keys)


class CodingSession:
    """One session of the labelled corpus, as a Conversation-like for capture and questions."""

    def __init__(self, record: dict) -> None:
        self.name = record["project"]
        self.id = record["id"]
        self.turns = record["turns"]
        self.probes = []
        for turn in self.turns:
            for sentence in turn.get("sentences", []):
                if sentence["kind"] != "none" and sentence["key"]:
                    question = sentence["text"]
                    for key in sentence["key"]:
                        question = question.replace(key, " ")
                    self.probes.append(Probe(" ".join(question.split()), sentence["key"]))

    def transcript(self, cwd: str) -> list[str]:
        lines, parent, start = [], None, 1_767_000_000 + 3600 * int("".join(filter(str.isdigit, self.id)) or 0)
        common = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": self.id,
                  "version": "2.1.332", "gitBranch": "main"}
        for n, turn in enumerate(self.turns):
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(start + 20 * n))
            me = f"{self.id}-{n}"
            if turn["role"] == "user":
                record = {"type": "user", "message": {"role": "user", "content": turn["text"]}}
            elif turn["role"] == "assistant":
                record = {"type": "assistant", "message": {"id": "msg_" + me, "role": "assistant",
                                                           "content": [{"type": "text", "text": turn["text"]}]}}
            else:
                lines.append(json.dumps({"parentUuid": parent, **common, "uuid": me + "c", "timestamp": stamp,
                                         "type": "assistant", "message": {"id": "msg_" + me, "role": "assistant",
                                         "content": [{"type": "tool_use", "id": "tu_" + me, "name": "Bash",
                                                      "input": {"command": turn["text"].splitlines()[0]}}]}}))
                parent = me + "c"
                record = {"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "tu_" + me, "content": turn["text"]}]}}
            lines.append(json.dumps({"parentUuid": parent, **common, **record, "uuid": me, "timestamp": stamp}))
            parent = me
        return lines


def capture_coding(hooks: Hooks, session: CodingSession, project: Path, claude_home: Path) -> None:
    folder = claude_home / ("-" + str(project).strip("/").replace("/", "-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session.id}.jsonl"
    path.write_text("\n".join(session.transcript(str(project))) + "\n")
    base = {"session_id": session.id, "transcript_path": str(path), "cwd": str(project)}
    hooks.run({**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": ""}, "Stop")
    hooks.run({**base, "hook_event_name": "SessionEnd", "reason": "other"}, "SessionEnd")


def retrieve_probes(env: dict[str, str], sessions: list[CodingSession], projects: Path, db: Path) -> list[bool]:
    asked = [(session, probe) for session in sessions for probe in session.probes]
    got = anyio.run(retrieve_each, env, db, [(projects / session.name, probe.question or " ".join(probe.keys))
                                             for session, probe in asked])
    return [any(probe.hit(item) for item in items) for (_, probe), items in zip(asked, got, strict=True)]


def hook_probes(hooks: Hooks, sessions: list[CodingSession], projects: Path) -> list[bool]:
    hits = []
    for session in sessions:
        for probe in session.probes:
            block, _ = hooks.run(prompt(projects / session.name, probe.question or " ".join(probe.keys)),
                                 "UserPromptSubmit")
            hits.append(any(probe.hit(entry) for entry in block.split("\n- [")))
    return hits


def share(hits: list[bool]) -> float:
    return sum(hits) / len(hits) if hits else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="the LoCoMo dev folder")
    parser.add_argument("--conversations", type=int, default=0, help="replay only the first K (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (printed)")
    parser.add_argument("--corpus", type=Path, help="labelled coding sessions (JSONL) instead of LoCoMo dev")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting for the prune (e.g. digest_max_chars=1000), as MEMORY_<NAME>")
    args = parser.parse_args()

    if args.corpus:
        coding = [CodingSession(json.loads(line)) for line in args.corpus.read_text().splitlines() if line.strip()]
        convs: list = coding
    else:
        data = locomo_dir(args.data)
        folders = sorted(p for p in data.iterdir() if (p / "memories.jsonl").is_file())
        every = [Conversation(f, False) for f in folders]
        convs = every[:args.conversations] if args.conversations else every
    work = Path(tempfile.mkdtemp(prefix="bk-", dir="/tmp"))
    work.chmod(0o700)
    runtime, data_dir = work / "rt", work / "data"
    runtime.mkdir(mode=0o700)
    data_dir.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "CLAUDE"))}
    env.update({"MEMORY_DATA_DIR": str(data_dir), "MEMORY_AGENT_ID": "bench", "MEMORY_TEAM": "benchteam",
                "MEMORY_HOOK_IDLE_MINUTES": "10", "MEMORY_RATE_LIMIT_PER_SECOND": "0",
                "MEMORY_MAX_ENTRIES_PER_NAMESPACE": "100000", "MEMORY_LOG_LEVEL": "warning",
                "XDG_RUNTIME_DIR": str(runtime)})
    other = os.environ.get("AGENT_MEMORY_BENCH_PYTHONPATH")
    if other:  # another checkout's hook command and prune (bench_hooks.py: compare two versions)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [other, env.get("PYTHONPATH")]))
    hooks = Hooks(env, runtime)
    db = data_dir / "memory.db"
    projects = work / "projects"
    claude_home = work / ".claude" / "projects"
    random.seed(7)
    print(f"{len(convs)} conversation(s) or sessions, {sum(len(c.turns) for c in convs)} turns; store {work}",
          file=sys.stderr)
    try:
        for conv in convs:
            (projects / conv.name / ".git").mkdir(parents=True, exist_ok=True)
            if args.corpus:
                capture_coding(hooks, conv, projects / conv.name, claude_home)
            else:
                capture(hooks, conv, projects / conv.name, claude_home, False, False)
                print(f"  {conv.name}: captured", file=sys.stderr)
        while backlog(db):
            time.sleep(0.5)

        def ask() -> tuple[list[bool], list[bool]]:
            if args.corpus:
                return retrieve_probes(env, convs, projects, db), hook_probes(hooks, convs, projects)
            return retrieve_all(env, convs, projects, db), hook_all(hooks, convs, projects)

        stored_before = layers(db)
        retrieve_before, hook_before = ask()

        hooks.kill_helpers()
        time.sleep(RETENTION_SECONDS + 0.5)
        started = time.perf_counter()
        chosen = {f"MEMORY_{name.strip().upper()}": value for name, _, value in (s.partition("=") for s in args.set)}
        done = subprocess.run([*AGENT_MEMORY, "prune"], env={
            **env, **chosen, "MEMORY_RETENTION_SESSION_DAYS": repr(RETENTION_SECONDS / 86_400)},
            capture_output=True, timeout=3600)
        prune_s = time.perf_counter() - started
        if done.returncode:
            sys.exit(f"prune failed: {done.stderr.decode()[-2000:]}")
        summary = done.stderr.decode().strip().splitlines()[-1:]
        stored_after = layers(db)
        retrieve_after, hook_after = ask()
        hooks.kill_helpers()

        what = (f"{args.corpus.name}, {len(convs)} sessions" if args.corpus
                else f"LoCoMo dev, {len(convs)} conversation(s)")
        print(f"\nkeeping bench: {what}, {len(retrieve_before)} questions with evidence; session layer expired by "
              "`agent-memory prune` (retention 2 s); turns in the replay: "
              f"{sum(len(c.turns) for c in convs)}, logged: {stored_before.get('session', (0, 0))[0]}")
        print(f"prune: {prune_s:.1f} s; {summary[0] if summary else ''}; settings: {' '.join(args.set) or 'defaults'}")
        print(f"\n{'evidence reachable':<40}{'before':>9}{'after':>9}{'after/before':>14}")
        for label, before, after in (("memory_retrieve (top 10, min_score 0)", retrieve_before, retrieve_after),
                                     ("hook UserPromptSubmit block", hook_before, hook_after)):
            print(f"{label:<40}{share(before):>9.3f}{share(after):>9.3f}{share(after) / share(before):>14.3f}")
        print(f"\n{'layer':<12}{'entries before':>16}{'chars before':>14}{'entries after':>15}{'chars after':>13}")
        for layer in sorted(set(stored_before) | set(stored_after)):
            nb, cb = stored_before.get(layer, (0, 0))
            na, ca = stored_after.get(layer, (0, 0))
            print(f"{layer:<12}{nb:>16}{cb:>14}{na:>15}{ca:>13}")
        total_before = sum(c for _, c in stored_before.values())
        total_after = sum(c for _, c in stored_after.values())
        print(f"{'all':<12}{sum(n for n, _ in stored_before.values()):>16}{total_before:>14}"
              f"{sum(n for n, _ in stored_after.values()):>15}{total_after:>13}")
        print(json.dumps({"retrieve_before": share(retrieve_before), "retrieve_after": share(retrieve_after),
                          "hook_before": share(hook_before), "hook_after": share(hook_after),
                          "chars_before": total_before, "chars_after": total_after}))
    finally:
        hooks.kill_helpers()
        if args.keep:
            print(f"kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
