"""The shortcuts of keyword search give exactly what the plain queries give: the best FTS5 matches
found before the visibility filter, term counts from the candidates' own text, remembered stems,
and near-duplicate removal with each text normalised once."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from agent_memory.core.recall.context import distinct, near_duplicate
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


def test_ascii_words_split_as_unicode61_splits_them() -> None:
    """`QueryStemmer.counts` splits ASCII text itself: every ASCII character must be a token
    character there exactly when FTS5's unicode61 makes it one, and the counts must be FTS5's."""
    stemmer = bm25.QueryStemmer()
    rng = random.Random(11)
    texts = [f"Run{chr(c)}ning lake{chr(c)}{chr(c)}x {chr(c)}kids" for c in range(1, 128)]
    texts += ["".join(chr(rng.randrange(1, 128)) for _ in range(rng.randint(1, 80))) for _ in range(300)]
    for rowid, text in enumerate(texts, start=1):
        doc = (rowid, text, f'["{rng.choice(texts)[:8]}"]')
        from_fts = _weighted(_all_terms(doc))
        # Any term either side would name: one the split here made up shows as a key FTS5 lacks.
        asked = sorted(set(stemmer.terms(bm25._ASCII_WORD.findall(doc[1] + " " + doc[2])))
                       | {term for _, term in from_fts})
        assert stemmer.counts([doc], asked) == from_fts, doc
        assert stemmer.counts([doc], asked) == from_fts, doc  # remembered


def _all_terms(doc: tuple[int, str, str]) -> list[tuple[int, str, object, int]]:
    """Every (doc, term, column, count) FTS5 itself gives this document."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE d USING fts5(content, tags, tokenize='porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE d_hits USING fts5vocab(d, 'instance')")
    conn.execute("INSERT INTO d (rowid, content, tags) VALUES (?, ?, ?)", doc)
    return conn.execute("SELECT doc, term, col, COUNT(*) FROM d_hits GROUP BY doc, term, col").fetchall()


def _weighted(hits: list[tuple[int, str, object, int]]) -> dict[tuple[int, str], float]:
    out: dict[tuple[int, str], float] = {}
    for doc, term, col, count in hits:
        weight = bm25.COLUMN_WEIGHTS[col if isinstance(col, int) else (0 if col == "content" else 1)]
        out[(doc, term)] = out.get((doc, term), 0.0) + weight * count
    return out


async def test_remembered_counts_and_statistics_follow_every_change(conn: sqlite3.Connection,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept document counts and index statistics give what a fresh read gives, after the
    text of an entry changes, entries are added or removed, by this connection or another."""
    monkeypatch.setattr(bm25, "SCAN_PER_DOC", 0)  # the candidates' own text, always
    stemmer, stats = bm25.QueryStemmer(), bm25.TermStats()
    other = sqlite3.connect(conn.execute("PRAGMA database_list").fetchone()[2])
    stems = stemmer.terms(["caroline", "lake", "running", "kids", "café"])

    def both() -> tuple[dict, dict]:
        rowids = [row[0] for row in conn.execute("SELECT rowid FROM entries ORDER BY rowid LIMIT 200")]
        kept = bm25.rescore(conn, stems, rowids, stemmer, stats=stats)
        return kept, bm25.rescore(conn, stems, rowids, bm25.QueryStemmer(), stats=bm25.TermStats())

    changes = [
        (conn, "UPDATE entries SET content = 'caroline caroline lake' WHERE rowid = 3"),
        (other, "UPDATE entries SET content = 'running kids café', tags = '[\"lake\"]' WHERE rowid = 5"),
        (other, "DELETE FROM entries WHERE rowid IN (7, 8, 9)"),
        (conn, "INSERT INTO entries (id, scope, namespace, team, owner_agent_id, content, tags, priority, source,"
               " confidence, layer, created_at, updated_at, version, etag) VALUES ('mem_new', 'agent', 'ns', 'red',"
               " 'alice', 'lake lake lake caroline', '[]', 'medium', 'manual', 1.0, 'long_term',"
               " '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z', 1, 'e')"),
        (other, "UPDATE entries SET content = 'naïve café à Zürich caroline' WHERE rowid = 11"),
    ]
    kept, fresh = both()
    assert kept == fresh
    for who, sql in changes:
        who.execute(sql)
        who.commit()
        kept, fresh = both()
        assert kept == fresh, sql
        assert stats.total(conn) == conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]


async def test_matched_words_keep_the_rarest_within_the_budget(conn: sqlite3.Connection) -> None:
    """Beyond the two rarest words, the next rarest join the MATCH while all of them together hold
    at most `budget` entries (and each at most a tenth of the store)."""
    stemmer, stats = bm25.QueryStemmer(), bm25.TermStats()
    words = ["caroline", "lake", "pottery", "kids", "camping", "support"]
    df = {w: stats.terms(conn, stemmer.terms([w]))[stemmer.terms([w])[0]][0] for w in words}
    ordered = sorted(words, key=lambda w: df[w])
    for budget in (0, df[ordered[2]], df[ordered[2]] + df[ordered[3]], 10**6):
        chosen = bm25.selective_terms(conn, words, stemmer, total=100_000, stats=stats, budget=budget)
        expected, held = set(ordered[:2]), 0
        for word in ordered[2:]:
            held += df[word]
            if held > budget:
                break
            expected.add(word)
        assert chosen == [w for w in words if w in expected], budget
    # A small store is matched on every word; a word in over a tenth of the store only as one of the rarest two.
    assert bm25.selective_terms(conn, words, stemmer, stats=stats, budget=0) == words
    share = (df[ordered[2]] - 0.5) / 100_000
    assert set(bm25.selective_terms(conn, words, stemmer, share, total=100_000, stats=stats, budget=10**6)) == \
        set(ordered[:2])


def test_matched_lexemes_on_postgresql_keep_the_rarest_within_the_budget() -> None:
    from agent_memory.storage.postgres.bm25 import selective

    df = {"a": 10, "b": 20, "c": 3000, "d": 2500, "e": 9000, "f": 40}
    lexemes = sorted(df)
    assert selective(lexemes, df, 100_000) == ["a", "b", "d", "f"]  # c would bring the total to 5,540
    assert selective(lexemes, df, 100_000, budget=10**6) == lexemes
    assert selective(lexemes, df, 100_000, budget=0) == ["a", "b"]
    assert selective(lexemes, df, 20_000, budget=10**6) == ["a", "b", "f"]  # d: over a tenth of 20,000
    assert selective(lexemes, df, 4_999, budget=0) == lexemes  # a small store: every lexeme
