"""memory_reflect at scale: log a 2,000-turn session, compact it, reflect it.

    python tests/bench/bench_reflect.py [--turns 2000] [--batch 100] [--queries 0] [--set NAME=VALUE ...]

One real stdio server on a fresh data directory (vector index on, background reflection and
pruning off, automatic compaction off so that compaction is the measured stage; `--set` passes
any other setting, e.g. `--set compaction_chunk_turns=40`). The session is real conversation:
LoCoMo dev turns in order (role user, the speaker as name, the session date as `at`). Prints the
time of each stage, and for the LoCoMo questions about those turns (`--queries N` spreads N of
them evenly; 0, the default, takes all) the answer of memory_retrieve (hybrid, limit 10, default
budget) before and after compaction: items, context characters, and the share of questions for
which the answer holds
  - turn:      an evidence turn itself;
  - covered:   an evidence turn, or a compaction summary covering one (its `turns:` tag);
  - detail:    an evidence turn, or a covering summary whose text in the answer still holds at
               least half of that turn's content words;
  - answer:    every content word of the reference answer, anywhere in the context.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from agent_memory.core.recall.query_terms import keyword_terms

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_data import DEFAULT, locomo_dir  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = DEFAULT  # main() sets the folder given (--data, $AGENT_MEMORY_LOCOMO)
SESSION = "bench-session"


def session_turns(n: int) -> tuple[list[dict], list[dict]]:
    """The first `n` LoCoMo turns, and the questions whose evidence is among them (evidence as
    indexes into the turns)."""
    turns, by_dia, queries = [], {}, []
    for folder in sorted(DATA.iterdir()):
        for line in (folder / "memories.jsonl").read_text().splitlines():
            row = json.loads(line)
            if len(turns) < n:
                by_dia[f"{row['conv']}:{row['dia_id']}"] = len(turns)
                turns.append({"role": "user", "name": row["speaker"], "content": row["text"].split(": ", 1)[-1],
                              "at": row["session_date_iso"] + ":00Z"})
        for line in (folder / "queries.jsonl").read_text().splitlines():
            row = json.loads(line)
            evidence = {by_dia.get(f"{row['conv']}:{d}") for d in row["evidence"]} - {None}
            if evidence:
                queries.append({"question": row["question"], "answer": str(row.get("answer", "")),
                                "evidence": evidence})
    return turns, queries


def spread(queries: list[dict], n: int) -> list[dict]:
    if not n or n >= len(queries):
        return queries
    return [queries[i * len(queries) // n] for i in range(n)]


def ordinals(turns: list[dict]) -> list[int]:
    """Each turn's 1-based position in its session, as the server orders turns: by `at`, then by
    when it was logged."""
    order = sorted(range(len(turns)), key=lambda i: (turns[i]["at"], i))
    position = [0] * len(turns)
    for rank, index in enumerate(order, 1):
        position[index] = rank
    return position


def covered_turns(tags: list[str]) -> range | set[int] | None:
    """The session ordinals a compaction summary covers (its `turns:a-b` tag); None: not a summary.
    A summary without that tag (the one-summary compaction of old) covers every turn."""
    if "compaction" not in tags:
        return None
    for tag in tags:
        if tag.startswith("turns:"):
            found: set[int] = set()
            for part in tag[6:].split(","):
                first, _, last = part.partition("-")
                found.update(range(int(first), int(last or first) + 1))
            return found
    return range(1, sys.maxsize)


async def call(client: Client, tool: str, arguments: dict) -> tuple[dict, float]:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    elapsed = time.perf_counter() - started
    assert not result.is_error, result.structured_content
    return result.structured_content, elapsed


async def settle(client: Client, probe: str) -> float:
    """Waits until semantic search answers (not degraded) and finds `probe`."""
    started = time.perf_counter()
    with anyio.fail_after(1800):
        while True:
            data, _ = await call(client, "memory_retrieve", {"query": probe, "mode": "semantic", "limit": 5,
                                                             "per_entry_max_chars": 100_000})
            if data["degraded"] is None and any(probe in i["content"] for i in data["items"]):
                return time.perf_counter() - started
            await anyio.sleep(0.5)


async def measure(client: Client, queries: list[dict], turns: list[dict], ids: list[str],
                  position: list[int]) -> dict[str, float]:
    items, chars, times = [], [], []
    hits = {"turn": 0, "covered": 0, "detail": 0, "answer": 0}
    words = [set(keyword_terms(t["content"])) for t in turns]
    for query in queries:
        data, elapsed = await call(client, "memory_retrieve", {"query": query["question"], "limit": 10})
        times.append(elapsed * 1000)
        items.append(len(data["items"]))
        chars.append(data["used_chars"])
        found = {i["id"] for i in data["items"]}
        turn = any(ids[e] in found for e in query["evidence"])
        covering = [(covers, i["content"]) for i in data["items"] if (covers := covered_turns(i["tags"])) is not None]
        covered = [(e, text) for e in query["evidence"] for covers, text in covering if position[e] in covers]
        detail = any(len(words[e] & set(keyword_terms(text))) * 2 >= len(words[e]) for e, text in covered)
        answer = set(keyword_terms(query["answer"]))
        hits["turn"] += turn
        hits["covered"] += turn or bool(covered)
        hits["detail"] += turn or detail
        hits["answer"] += bool(answer) and answer <= set(keyword_terms(data["context"]))
    return {"items": statistics.mean(items), "chars": statistics.mean(chars), "p50": statistics.median(times),
            **{k: v / len(queries) for k, v in hits.items()}}


async def run(n_turns: int, batch: int, n_queries: int, extra: dict[str, str]) -> None:
    turns, queries = session_turns(n_turns)
    queries = spread(queries, n_queries)
    position = ordinals(turns)
    data_dir = tempfile.mkdtemp(prefix="bench-reflect-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update({"MEMORY_DATA_DIR": data_dir, "MEMORY_AGENT_ID": "bench", "MEMORY_TEAM": "bench",
                "MEMORY_RATE_LIMIT_PER_SECOND": "0", "MEMORY_COMPACTION_THRESHOLD_CHARS": "0",
                "MEMORY_RETRIEVAL_INLINE_EMBED_MAX": "0",
                "MEMORY_REFLECTION_INTERVAL_SECONDS": "0", "MEMORY_PRUNE_INTERVAL_SECONDS": "0",
                "MEMORY_LOG_LEVEL": "warning"})
    env.update({f"MEMORY_{name.upper()}": value for name, value in extra.items()})
    command = str(Path(sys.executable).with_name("agent-memory"))
    params = StdioServerParameters(command=command, args=["serve"], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=600) as client:
        batch_times, ids = [], []
        started = time.perf_counter()
        for start in range(0, len(turns), batch):
            logged, elapsed = await call(client, "memory_reflect", {"action": "log", "session_id": SESSION,
                                                                     "turns": turns[start:start + batch]})
            ids += [i["id"] for i in logged["items"]]
            batch_times.append(elapsed * 1000)
        logged = time.perf_counter() - started
        indexed = await settle(client, turns[-1]["content"])
        before = await measure(client, queries, turns, ids, position)
        compacted, t_compact = await call(client, "memory_reflect", {"action": "compact", "session_id": SESSION})
        reflected, t_reflect = await call(client, "memory_reflect", {"action": "reflect", "session_id": SESSION,
                                                                     "use_sampling": False, "max_items": 100})
        # The turns left intact are the most recent by `at`; a new fact must have been indexed.
        settled = await settle(client, reflected["items"][-1]["content"])
        after = await measure(client, queries, turns, ids, position)
    facts = sum(1 for i in reflected["items"] if i["layer"] == "long_term")
    rules = sum(1 for i in reflected["items"] if i["layer"] == "meta")
    sizes = [len(i["content"]) for i in compacted["items"]]
    print(f"memory_reflect, one session of {len(turns)} turns (LoCoMo dev), stdio, vector index on"
          + "".join(f", {name}={value}" for name, value in extra.items()))
    print(f"  log      {len(batch_times)} calls of {batch} turns: {logged:.2f} s total "
          f"({len(turns) / logged:.0f} turns/s), per call p50 {statistics.median(batch_times):.0f} ms "
          f"max {max(batch_times):.0f} ms; searchable by meaning {indexed:.1f} s later")
    print(f"  compact  {compacted['compacted']} turns into {len(sizes)} summaries of {statistics.mean(sizes):.0f} "
          f"characters on average (max {max(sizes)}, {sum(sizes)} in all): {t_compact * 1000:.0f} ms")
    print(f"  reflect  extractive, {reflected['turns_processed']} turns -> {facts} facts + {rules} rules: "
          f"{t_reflect * 1000:.0f} ms; index settled {settled:.1f} s after")
    print(f"  memory_retrieve over {len(queries)} LoCoMo questions (hybrid, limit 10, default budget); share whose "
          "answer holds the evidence turn / it or a summary covering it / with the turn's detail / the answer words:")
    for label, m in (("before compaction", before), ("after compaction", after)):
        print(f"    {label:<18} items {m['items']:.1f}  context {m['chars']:.0f} chars  turn {m['turn']:.0%}  "
              f"covered {m['covered']:.0%}  detail {m['detail']:.0%}  answer {m['answer']:.0%}  "
              f"p50 {m['p50']:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--queries", type=int, default=0, help="questions measured, spread evenly (0: all)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a server setting, e.g. compaction_chunk_turns=40 (repeatable)")
    parser.add_argument("--data", type=Path, help="the LoCoMo dev folder (default: $AGENT_MEMORY_LOCOMO, else "
                                                  "../shared/data/locomo/dev)")
    args = parser.parse_args()
    global DATA
    DATA = locomo_dir(args.data)
    extra = dict(item.split("=", 1) for item in args.set)
    anyio.run(run, args.turns, args.batch, args.queries, extra)


if __name__ == "__main__":
    main()
