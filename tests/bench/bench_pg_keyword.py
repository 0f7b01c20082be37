"""Keyword search on LoCoMo dev: PostgreSQL's RetrievalStore against SQLite's, at the port level.

    .venv/bin/python tests/bench/bench_pg_keyword.py [--data DIR] [--conv conv-26] [--noise 10000]

For each conversation, both stores get the same entries (every turn one agent-scope memory of
that conversation's agent, in order), written through their entry repositories; each query then
runs through both:
  - "store": the port's own candidates (`readable_keyword_candidates`, depth 100), best first by
    the BM25 score they come with;
  - "retrieve": `RetrievalService.retrieve` in mode keyword, limit 10 (the core's ranking over
    those candidates, as `memory_retrieve` does; the server's default weights).
and prints recall@10 and MRR@10 for each, with the keyword stage's median latency. `--noise N`
adds N entries of other agents (the other conversations' turns, shuffled), invisible to the caller
but counted in the term statistics, to time the stores at that size.

A throwaway PostgreSQL 16 comes from the `pgserver` binaries (as tests/postgres.py starts it), or
`MEMORY_TEST_POSTGRES_URL` names one; needs the LoCoMo dev set (tests/bench/locomo_data.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent_memory.bootstrap import rank_weights  # noqa: E402
from agent_memory.config import load_settings  # noqa: E402
from agent_memory.core.access.visibility import readable_areas  # noqa: E402
from agent_memory.core.model.commands import Call  # noqa: E402
from agent_memory.core.model.models import AuditEvent, Caller, Entry, Layer, Priority, Scope, Source, SystemType  # noqa: E402
from agent_memory.core.ports import CandidateFilter  # noqa: E402
from agent_memory.core.recall.query_terms import keyword_terms  # noqa: E402
from agent_memory.core.recall.retrieval import RetrievalRequest, RetrievalService, RetrievalSettings  # noqa: E402
from agent_memory.storage.postgres.database import PostgresDatabase  # noqa: E402
from agent_memory.storage.postgres.entries import PostgresEntryRepository  # noqa: E402
from agent_memory.storage.postgres.migrations import migrate as pg_migrate  # noqa: E402
from agent_memory.storage.postgres.search import PostgresRetrievalStore  # noqa: E402
from agent_memory.storage.sqlite.database import Database  # noqa: E402
from agent_memory.storage.sqlite.entries import SqliteEntryRepository  # noqa: E402
from agent_memory.storage.sqlite.migrations import migrate  # noqa: E402
from agent_memory.storage.sqlite.search import SqliteRetrievalStore  # noqa: E402
from tests.bench.locomo_data import locomo_dir  # noqa: E402
from tests.postgres import LocalPostgres, PostgresForTests, pgserver_bin_dir  # noqa: E402

NOW = datetime(2026, 3, 1, tzinfo=UTC)
DEPTH = 100


class DiscardAudit:
    """The retrieval audit rows are not what this measures."""

    async def record(self, event: AuditEvent) -> None:
        return None

    def trouble(self) -> str | None:
        return None


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def entry(i: int, text: str, agent: str) -> Entry:
    stamp = f"2026-01-01T00:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z"
    return Entry(id=f"mem_{agent}_{i:06d}", scope=Scope.AGENT, namespace=agent, team="locomo", owner_agent_id=agent,
                 content=text, tags=(), priority=Priority.MEDIUM, source=Source.MANUAL, confidence=1.0,
                 layer=Layer.WORKING, created_at=stamp, updated_at=stamp, expires_at=None, version=1, etag="e")


async def write(repo: object, entries: list[Entry]) -> None:
    for start in range(0, len(entries), 2000):
        batch = entries[start:start + 2000]

        def work(tx: object, batch: list[Entry] = batch) -> None:
            for e in batch:
                tx.insert(e)  # type: ignore[attr-defined]

        await repo.transact(work)  # type: ignore[attr-defined]


def score(ranked: list[str], evidence: set[str]) -> tuple[float, float]:
    first = next((rank for rank, dia in enumerate(ranked[:10], 1) if dia in evidence), None)
    return len(evidence & set(ranked[:10])) / len(evidence), (1 / first if first else 0.0)


async def evaluate(folder: Path, noise: list[str], pg_url: str, results: dict[str, list], ms: dict[str, list]) -> None:
    memories, queries = read_jsonl(folder / "memories.jsonl"), read_jsonl(folder / "queries.jsonl")
    agent = folder.name
    entries = [entry(i, m["text"], agent) for i, m in enumerate(memories)]
    dia_of = {e.id: m["dia_id"] for e, m in zip(entries, memories, strict=True)}
    others = [replace(entry(i, text, f"other{i % 20}"), id=f"mem_noise_{i:06d}") for i, text in enumerate(noise)]
    sqlite_db = Database(Path(tempfile.mkdtemp(prefix="pgkw-")) / "s.db")
    pg_db = PostgresDatabase(pg_url, pool_size=2)
    await sqlite_db.open()
    await pg_db.open()
    try:
        await migrate(sqlite_db)
        await pg_migrate(pg_db)
        for repo in (SqliteEntryRepository(sqlite_db), PostgresEntryRepository(pg_db)):
            await write(repo, others + entries)
        # What autovacuum does after a bulk load: statistics, and the GIN index's pending list merged.
        await pg_db.read(lambda conn: conn.execute("VACUUM ANALYZE entries"))
        caller = Caller(agent, SystemType.SYS1, "locomo")
        areas = readable_areas(caller)
        filters = CandidateFilter(now="2026-03-01T00:00:00.000Z")
        settings = load_settings(environ={}, overrides={})
        for name, store in (("sqlite", SqliteRetrievalStore(sqlite_db)), ("postgres", PostgresRetrievalStore(pg_db))):
            service = RetrievalService(store, None, DiscardAudit(), RetrievalSettings(
                candidate_depth=DEPTH, weights=rank_weights(settings)), lambda: NOW)
            for query in queries:
                evidence = set(query["evidence"])
                started = time.perf_counter()
                _, hits = await store.readable_keyword_candidates(keyword_terms(query["question"]), areas, (),
                                                                  filters, DEPTH)
                ms[name].append((time.perf_counter() - started) * 1000)
                ranked = [dia_of[e.id] for e, *_ in sorted(hits, key=lambda hit: -hit[2])]
                results[f"{name} store"].append((query["category"], *score(ranked, evidence)))
                answer = await service.retrieve(Call(caller, "req_bench", tool="memory_retrieve"), RetrievalRequest(
                    query["question"], limit=10, mode="keyword", max_chars=100_000))
                ranked = [dia_of[item.entry.id] for item in answer.items]
                results[f"{name} retrieve"].append((query["category"], *score(ranked, evidence)))
    finally:
        await pg_db.close()
        await sqlite_db.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path)
    parser.add_argument("--conv", action="append", help="only these conversations")
    parser.add_argument("--noise", type=int, default=0, help="entries of other agents to add (default 0)")
    args = parser.parse_args()
    data = locomo_dir(args.data)
    folders = sorted(p for p in data.iterdir() if p.is_dir() and (not args.conv or p.name in args.conv))
    external = os.environ.get("MEMORY_TEST_POSTGRES_URL")
    server = None
    if external:
        postgres = PostgresForTests(external)
    else:
        bin_dir = pgserver_bin_dir()
        if bin_dir is None:
            sys.exit("needs the pgserver wheel (the test extra) or MEMORY_TEST_POSTGRES_URL")
        server = LocalPostgres(bin_dir)
        server.start()
        postgres = PostgresForTests(server.url())
    results: dict[str, list] = defaultdict(list)
    ms: dict[str, list] = defaultdict(list)
    try:
        rng = random.Random(7)
        for folder in folders:
            texts = [m["text"] for other in folders if other != folder
                     for m in read_jsonl(other / "memories.jsonl")]
            noise = []
            for i in range(args.noise):
                words = texts[i % len(texts)].split()
                rng.shuffle(words)
                noise.append(" ".join(words))
            url = postgres.create_database()
            try:
                anyio.run(evaluate, folder, noise, url, results, ms)
            finally:
                postgres.drop_database(url)
    finally:
        if server is not None:
            server.stop()
    print(f"LoCoMo dev, keyword search at the port level, {len(folders)} conversations, +{args.noise} other entries")
    print(f"{'':<20}{'n':>6}{'recall@10':>11}{'MRR@10':>9}")
    for name, rows in results.items():
        print(f"{name:<20}{len(rows):>6}{statistics.mean(r[1] for r in rows):>11.3f}"
              f"{statistics.mean(r[2] for r in rows):>9.3f}")
        by_category: dict[int, list] = defaultdict(list)
        for row in rows:
            by_category[row[0]].append(row)
        print("    " + "  ".join(f"cat{c}: {statistics.mean(r[1] for r in by_category[c]):.3f}"
                                 for c in sorted(by_category)))
    for name, took in ms.items():
        took.sort()
        print(f"{name:<10} keyword candidates: p50 {statistics.median(took):.2f} ms, "
              f"p95 {took[int(len(took) * 0.95)]:.2f} ms")


if __name__ == "__main__":
    main()
