"""BM25 without document-length normalisation (b = 0), over FTS5's own tokens.

FTS5's `bm25()` fixes b = 0.75, which penalises long memories; for short conversational memories
a term's presence matters more than the memory's length. Candidates still come from FTS5
(`MATCH`, best-first by its bm25); this rescoring reads term statistics from fts5vocab views, and
stems the query with the same `porter unicode61` tokenizer, so terms line up exactly.
"""

from __future__ import annotations

import math
import sqlite3
import threading

K1 = 1.2
MIN_ENTRIES_TO_PRUNE = 5000
COLUMN_WEIGHTS = {0: 1.0, 1: 0.5}  # content, tags


class QueryStemmer:
    """Tokenises text exactly as the index does, using a private in-memory FTS5 table."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute("CREATE VIRTUAL TABLE q USING fts5(x, tokenize='porter unicode61')")
        self._conn.execute("CREATE VIRTUAL TABLE q_terms USING fts5vocab(q, 'row')")

    def terms(self, words: list[str]) -> list[str]:
        with self._lock:
            self._conn.execute("INSERT INTO q (x) VALUES (?)", (" ".join(words),))
            stems = [row[0] for row in self._conn.execute("SELECT term FROM q_terms")]
            self._conn.execute("DELETE FROM q")
        return stems


def selective_terms(conn: sqlite3.Connection, words: list[str], stemmer: QueryStemmer,
                    max_share: float = 0.1, keep: int = 2) -> list[str]:
    """The query words worth a MATCH: those whose stem is in at most `max_share` of all entries
    (a word in most memories adds little to BM25 but makes FTS5 score most of the index). The
    `keep` rarest words always stay. Every word still counts when the candidates are rescored."""
    if len(words) <= keep:
        return words
    total = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0] or 1
    if total < MIN_ENTRIES_TO_PRUNE:
        return words  # a small index is cheap to score in full
    stems = {word: stemmer.terms([word]) for word in words}
    wanted = sorted({s for found in stems.values() for s in found})
    if not wanted:
        return words
    marks = ", ".join("?" for _ in wanted)
    df = dict(conn.execute(f"SELECT term, doc FROM entries_fts_terms WHERE term IN ({marks})", wanted).fetchall())
    rarity = {word: max((df.get(s, 0) for s in found), default=0) for word, found in stems.items()}
    ordered = sorted(words, key=lambda w: rarity[w])
    chosen = set(ordered[:keep]) | {w for w in words if rarity[w] <= max_share * total}
    return [w for w in words if w in chosen]


def rescore(conn: sqlite3.Connection, stems: list[str], rowids: list[int]) -> dict[int, tuple[float, float]]:
    """For each candidate row: BM25 (b = 0) for the stemmed query terms, and its keyword coverage,
    the share of the query's IDF weight among the terms it contains (0..1: 1 when every query term
    is in it; a term no entry holds weighs as much as the rarest possible one)."""
    if not stems or not rowids:
        return {}
    term_marks = ", ".join("?" for _ in stems)
    total = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0] or 1
    frequency = dict(conn.execute(f"SELECT term, doc FROM entries_fts_terms WHERE term IN ({term_marks})", stems))
    idf = {term: math.log(1 + (total - frequency.get(term, 0) + 0.5) / (frequency.get(term, 0) + 0.5))
           for term in set(stems)}
    query_weight = sum(idf.values()) or 1.0
    doc_marks = ", ".join("?" for _ in rowids)
    frequencies: dict[tuple[int, str], float] = {}
    for doc, term, col, count in conn.execute(
        f"SELECT doc, term, col, COUNT(*) FROM entries_fts_hits WHERE term IN ({term_marks}) "
        f"AND doc IN ({doc_marks}) GROUP BY doc, term, col", [*stems, *rowids]):
        weight = COLUMN_WEIGHTS.get(col if isinstance(col, int) else (0 if col == "content" else 1), 0.5)
        frequencies[(doc, term)] = frequencies.get((doc, term), 0.0) + weight * count
    scores: dict[int, tuple[float, float]] = {}
    for (doc, term), tf in frequencies.items():
        score, covered = scores.get(doc, (0.0, 0.0))
        scores[doc] = (score + idf[term] * tf * (K1 + 1) / (tf + K1), covered + idf[term] / query_weight)
    return scores
