"""The shortcuts of keyword search give exactly what the plain queries give: the best FTS5 matches
found before the visibility filter, term counts from the candidates' own text, remembered stems,
and near-duplicate removal with each text normalised once."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from agent_memory.core.context import distinct, near_duplicate
from agent_memory.storage.sqlite import bm25
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.matches import COLUMNS, ORDER, BestMatches
from agent_memory.storage.sqlite.migrations import migrate

pytestmark = pytest.mark.anyio

WORDS = "Caroline Melanie painted the lake running runs café naïve kids camping pottery support group".split()


@pytest.fixture
async def conn(tmp_path: Path) -> sqlite3.Connection:
    db = Database(tmp_path / "k.db")
    await db.open()
    await migrate(db)
    await db.close()
    conn = sqlite3.connect(tmp_path / "k.db")
    rng = random.Random(7)
    rows = []
    for i in range(600):  # few distinct texts: many ties in bm25
        text = " ".join(rng.choice(WORDS) for _ in range(rng.choice((3, 6))))
        rows.append((f"mem_{i:04d}", "alice" if i % 4 else "bob", text, '["kids"]' if i % 5 == 0 else "[]"))
    conn.executemany(
        "INSERT INTO entries (id, scope, namespace, team, owner_agent_id, content, tags, priority, source, confidence,"
        " layer, created_at, updated_at, version, etag) VALUES (?, 'agent', 'ns', 'red', ?, ?, ?, 'medium', 'manual',"
        " 1.0, 'long_term', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z', 1, 'e')", rows)
    conn.commit()
    return conn


@pytest.mark.parametrize("where", ["e.owner_agent_id = ?", "e.owner_agent_id != ?", "(e.owner_agent_id = ? OR 1)"])
async def test_best_matches_are_the_rows_of_the_full_query(conn: sqlite3.Connection, where: str) -> None:
    best = BestMatches()
    for match in ('"caroline"', '"lake" OR "kid"', '"pottery" OR "support" OR "the"', '"zzz"', '"cafe"'):
        for limit in (1, 10, 100, 1000):
            full = conn.execute(f"SELECT {COLUMNS}, e.rowid FROM entries_fts JOIN entries e ON e.rowid = "
                                f"entries_fts.rowid WHERE entries_fts MATCH ? AND {where} {ORDER} LIMIT ?",
                                [match, "alice", limit]).fetchall()
            for _ in range(2):  # the second time after a miss, the full query directly
                assert best(conn, match, where, ["alice"], limit, key=where) == full


async def test_term_counts_from_the_text_equal_those_of_the_index(conn: sqlite3.Connection,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    stemmer = bm25.QueryStemmer()
    rowids = [row[0] for row in conn.execute("SELECT rowid FROM entries ORDER BY random() LIMIT 150")]
    for words in (["caroline", "painted"], ["running", "kids", "cafe", "naïve"], ["zzz"], ["the", "lake"]):
        stems = stemmer.terms(words)
        monkeypatch.setattr(bm25, "SCAN_PER_DOC", 10**9)
        from_index = bm25.rescore(conn, stems, rowids, stemmer)
        monkeypatch.setattr(bm25, "SCAN_PER_DOC", 0)
        assert bm25.rescore(conn, stems, rowids, stemmer) == from_index
        assert bm25.rescore(conn, stems, rowids, stemmer, total=600) == from_index


def test_remembered_stems_are_those_of_the_whole_text() -> None:
    reference = sqlite3.connect(":memory:")
    reference.execute("CREATE VIRTUAL TABLE q USING fts5(x, tokenize='porter unicode61')")
    reference.execute("CREATE VIRTUAL TABLE q_terms USING fts5vocab(q, 'row')")
    stemmer = bm25.QueryStemmer()
    for words in (["running", "runs", "café"], ["naïve", "running", "zürich", "日本語"], ["kids"], []):
        reference.execute("INSERT INTO q (x) VALUES (?)", (" ".join(words),))
        expected = [row[0] for row in reference.execute("SELECT term FROM q_terms")]
        reference.execute("DELETE FROM q")
        assert stemmer.terms(words) == expected
        assert stemmer.terms(words) == expected  # remembered


def test_distinct_keeps_what_the_pairwise_check_keeps() -> None:
    rng = random.Random(3)
    texts = [" ".join(rng.choice(WORDS[:6]) for _ in range(rng.randint(1, 12))) for _ in range(300)]
    for limit in (1, 5, 10, 50):
        kept: list[str] = []
        for text in texts:
            if len(kept) >= limit:
                break
            if not any(near_duplicate(text, k) for k in kept):
                kept.append(text)
        assert distinct(texts, lambda t: t, limit) == kept
