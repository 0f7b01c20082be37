"""Where questions go in a crowd (the cause behind `bench_locomo.py --distractors N`): each
conversation alone and among N distractors (the same `distractors` and `interleave` as
bench_locomo.py), the same questions through `memory_retrieve`; the candidates handed to the
ranking are captured, so each question's record (`--out`, JSON) says where its evidence went: in
the top 10, among the candidates but ranked lower, or not a candidate; and "own-only rerank" ranks
the conversation's own candidates alone (what the crowd's entries cost by being ranked among them).

    python tests/bench/crowd_diag.py --conv conv-26 --distractors 20000 [--mode keyword|hybrid]
        [--backend sqlite|postgres] [--out FILE]

Counterfactuals (SQLite only; each replaces one product function in this process, for diagnosis,
never a benchmark figure): DIAG_OWN_STATS=1 scores the crowd store's candidates with the BM25
statistics (N, document frequencies) of the conversation alone; DIAG_POOL=pool|min takes each
term's IDF from the candidates themselves (or the smaller of that and the store's);
DIAG_NAMES_GLOBAL=1 (with DIAG_POOL) keeps the store's IDF for the query's names;
DIAG_SHIFT=F lowers every query term's IDF by the smallest one's, less F (a crowd holding none of
the query's words raises them all alike; tried: it lowers recall in the crowd); DIAG_BUDGET=N the
match budget; DIAG_NOPRUNE=1 matches every query word; DIAG_DEPTH=N the candidate depth.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client

import agent_memory.core.recall.retrieval as retrieval_module
from agent_memory.config import load_settings
from agent_memory.core.recall.ranking import rank as real_rank
from agent_memory.logging import configure_logging
from agent_memory.tools.server import create_server

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_locomo import distractors, interleave, read_jsonl, write_all  # noqa: E402
from locomo_data import locomo_dir  # noqa: E402
from pg_bench import bench_postgres  # noqa: E402

CAPTURED: dict[str, object] = {}
CURRENT: dict[str, object] = {}


def capturing_rank(candidates, **kw):
    CAPTURED["candidates"] = list(candidates)
    CAPTURED["kw"] = kw
    return real_rank(candidates, **kw)


retrieval_module.rank = capturing_rank

import math  # noqa: E402
import os  # noqa: E402
import sqlite3  # noqa: E402

import agent_memory.storage.sqlite.bm25 as sqlite_bm25  # noqa: E402
import agent_memory.storage.sqlite.search as sqlite_search  # noqa: E402


def _frequencies_and_idf(conn, stems, rowids, stemmer, docs, stats):
    """The candidates' term counts and the store's IDF per term, as the product's rescore reads them."""
    if docs is None:
        marks = ", ".join("?" for _ in rowids)
        docs = conn.execute(f"SELECT rowid, content, tags FROM entries WHERE rowid IN ({marks})", rowids).fetchall()
    stats = stats or sqlite_bm25.TermStats()
    big, known = stats.total(conn), stats.terms(conn, stems)
    return stemmer.counts(docs, stems), {t: math.log(1 + (big - known[t][0] + 0.5) / (known[t][0] + 0.5))
                                         for t in set(stems)}


def _bm25(freq, idf, coverage_idf):
    qw = sum(coverage_idf.values()) or 1.0
    scores = {}
    for (doc, term), tf in freq.items():
        sc, cov = scores.get(doc, (0.0, 0.0))
        scores[doc] = (sc + idf[term] * tf * 2.2 / (tf + 1.2), cov + coverage_idf[term] / qw)
    return scores


OWN_DB: dict[str, str] = {}
if os.environ.get("DIAG_BUDGET"):
    _sel = sqlite_bm25.selective_terms
    sqlite_search.selective_terms = lambda *a, **k: _sel(*a, **{**k, "budget": int(os.environ["DIAG_BUDGET"])})
if os.environ.get("DIAG_NOPRUNE"):
    sqlite_search.selective_terms = lambda conn, words, *a, **k: words
if os.environ.get("DIAG_POOL"):
    def pool_rescore(conn, stems, rowids, stemmer, *, docs=None, stats=None, total=None):
        if not stems or not rowids:
            return {}
        freq, gidf = _frequencies_and_idf(conn, stems, rowids, stemmer, docs, stats)
        n = len(rowids)
        df = {t: sum(1 for (d, s) in freq if s == t) for t in set(stems)}
        pidf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in set(stems)}
        how = os.environ["DIAG_POOL"]
        idf = pidf if how == "pool" else {t: min(gidf[t], pidf[t]) for t in gidf}
        if os.environ.get("DIAG_NAMES_GLOBAL"):
            names = set(stemmer.terms([w.lower() for w in CURRENT.get("names", ())]))
            idf = {t: (gidf[t] if t in names else v) for t, v in idf.items()}
        return _bm25(freq, idf, gidf)
    sqlite_search.rescore = pool_rescore
if os.environ.get("DIAG_SHIFT"):
    def shift_rescore(conn, stems, rowids, stemmer, *, docs=None, stats=None, total=None):
        """Each term's IDF less the smallest of the query's terms' (plus DIAG_SHIFT's floor): a crowd
        that holds none of the query's words raises every IDF by about the same amount."""
        if not stems or not rowids:
            return {}
        freq, gidf = _frequencies_and_idf(conn, stems, rowids, stemmer, docs, stats)
        low = min(gidf.values()) - float(os.environ["DIAG_SHIFT"])
        idf = {t: max(v - low, 0.0) for t, v in gidf.items()} if len(gidf) > 1 else gidf
        return _bm25(freq, idf, idf)
    sqlite_search.rescore = shift_rescore
if os.environ.get("DIAG_OWN_STATS"):
    _rescore = sqlite_bm25.rescore

    def own_rescore(conn, stems, rowids, stemmer, **k):
        if "path" not in OWN_DB:
            return _rescore(conn, stems, rowids, stemmer, **k)
        own = sqlite3.connect(OWN_DB["path"])
        stats = sqlite_bm25.TermStats()
        total, known = stats.total(own), stats.terms(own, stems)
        own.close()

        class Fixed:
            def total(self, _):
                return total

            def terms(self, _, s):
                return {x: known[x] for x in s}
        return _rescore(conn, stems, rowids, stemmer, **{**k, "stats": Fixed()})
    sqlite_search.rescore = own_rescore


async def run_store(folder: Path, mode: str, crowd: int, url: str | None, queries: list[dict]) -> list[dict]:
    memories = read_jsonl(folder / "memories.jsonl")
    agent = folder.name
    setup: dict[str, object] = {"backend": "postgres", "postgres_url": url} if url else {}
    if mode == "keyword":
        setup["vector_backend"] = "none"
    setup["max_entries_per_namespace"] = max(10_000, len(memories) + crowd + 1000)
    written = interleave(memories, distractors(folder, crowd), agent) if crowd else memories
    settings = load_settings(environ={}, overrides={
        "data_dir": tempfile.mkdtemp(prefix=f"diag-{agent}-"), "agent_id": agent, "team": "locomo",
        "rate_limit_per_second": 0, "log_level": "warning", "retrieval_inline_embed_max": 0, **setup,
        **({"retrieval_candidate_depth": int(os.environ["DIAG_DEPTH"])} if os.environ.get("DIAG_DEPTH") else {})})
    if not crowd and not url:
        OWN_DB["path"] = settings.sqlite_file
    out = []
    async with Client(create_server(settings), mode="auto") as client:
        dia_of = await write_all(client, written)
        last = written[-1] if isinstance(written[-1], str) else written[-1]["text"]
        with anyio.fail_after(max(600.0, len(written) / 20)):
            while mode != "keyword":
                probe = await client.call_tool("memory_retrieve", {"query": last, "mode": "semantic", "limit": 3})
                data = probe.structured_content
                if data["degraded"] is None and any(i["content"] == last for i in data["items"]):
                    break
                await anyio.sleep(0.2)
        for query in queries:
            from agent_memory.core.recall.query_terms import mentioned_names
            CURRENT["names"] = mentioned_names(query["question"])
            answer = await client.call_tool("memory_retrieve", {"query": query["question"], "limit": 10,
                                                                 "mode": mode, "max_chars": 100_000})
            data = answer.structured_content
            cands = CAPTURED["candidates"]
            ranked = [dia_of.get(i["id"], "") for i in data["items"]]
            evidence = set(query["evidence"])
            # the candidates' own ranking, and what the rank would be with only own candidates
            own = [c for c in cands if c.entry.id in dia_of]
            own_ranked = real_rank([_copy(c) for c in own], **CAPTURED["kw"])
            own_top = [dia_of[c.entry.id] for c in own_ranked[:10]]
            out.append({
                "q": query["question"], "evidence": sorted(evidence),
                "r10": len(evidence & set(ranked[:10])) / len(evidence),
                "r10_own_only": len(evidence & set(own_top)) / len(evidence),
                "ncand": len(cands), "nown": len(own),
                "ev_in_cands": sorted(evidence & {dia_of.get(c.entry.id, "") for c in cands}),
                "cands": {dia_of.get(c.entry.id, "x"): (round(c.keyword, 3), round(c.coverage, 3),
                                                        round(c.semantic, 3)) for c in cands if c.entry.id in dia_of},
                "top": ranked,
                "crowd_top": [i["content"][:100] for i in data["items"] if i["id"] not in dia_of],
            })
    return out


def _copy(c):
    from dataclasses import replace
    return replace(c)


async def main_async(args) -> None:
    data = locomo_dir(args.data)
    folders = sorted(p for p in data.iterdir() if p.is_dir() and (not args.conv or p.name in args.conv))
    results = {}
    with bench_postgres() if args.backend == "postgres" else _null() as dbs:
        for folder in folders:
            queries = read_jsonl(folder / "queries.jsonl")
            for crowd in (0, args.distractors):
                url = dbs.create_database() if dbs else None
                results[(folder.name, crowd)] = await run_store(folder, args.mode, crowd, url, queries)
                rows = results[(folder.name, crowd)]
                print(f"{folder.name} crowd {crowd}: r10 {statistics.mean(r['r10'] for r in rows):.3f} "
                      f"own-only rerank {statistics.mean(r['r10_own_only'] for r in rows):.3f} "
                      f"own cands median {statistics.median(r['nown'] for r in rows)}", file=sys.stderr)
                # written after every store: a long run interrupted keeps what it measured
                Path(args.out).write_text(json.dumps({f"{k[0]}|{k[1]}": v for k, v in results.items()}))


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path)
    p.add_argument("--conv", action="append")
    p.add_argument("--mode", default="keyword")
    p.add_argument("--backend", default="sqlite")
    p.add_argument("--distractors", type=int, default=20000)
    p.add_argument("--out", default="/tmp/crowd_diag.json")
    args = p.parse_args()
    configure_logging("warning", "console")
    anyio.run(main_async, args)


if __name__ == "__main__":
    main()
