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
from collections import OrderedDict

K1 = 1.2
MIN_ENTRIES_TO_PRUNE = 5000
COLUMN_WEIGHTS = {0: 1.0, 1: 0.5}  # content, tags
STEM_CACHE = 10_000  # words whose stems are remembered (most recently used)
SCAN_PER_DOC = 40  # see `rescore`: above this many term occurrences per candidate, tokenise the candidates


class QueryStemmer:
    """Tokenises text exactly as the index does, using a private in-memory FTS5 table; also
    counts query terms in a few documents the same way (see `rescore`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._conn.execute("CREATE VIRTUAL TABLE q USING fts5(x, tokenize='porter unicode61')")
        self._conn.execute("CREATE VIRTUAL TABLE q_hits USING fts5vocab(q, 'instance')")
        # Same columns and tokenizer as entries_fts; contentless, so it empties in one step.
        self._conn.execute("CREATE VIRTUAL TABLE d USING fts5(content, tags, content='', tokenize='porter unicode61')")
        self._conn.execute("CREATE VIRTUAL TABLE d_hits USING fts5vocab(d, 'instance')")
        self._words: OrderedDict[str, tuple[str, ...]] = OrderedDict()  # word -> its stems, recent last

    def terms(self, words: list[str]) -> list[str]:
        """The distinct stems of `words`, sorted as FTS5 sorts terms. Words are as `keyword_terms`
        gives them (no separators inside), so each is tokenised alone, once, and remembered."""
        with self._lock:
            new = [w for w in dict.fromkeys(words) if w not in self._words]
            if new:
                self._stem(new)
            found: set[str] = set()
            for word in words:
                self._words.move_to_end(word)
                found.update(self._words[word])
            while len(self._words) > STEM_CACHE:
                self._words.popitem(last=False)
        return sorted(found)  # code point order is UTF-8 byte order, FTS5's

    def _stem(self, words: list[str]) -> None:
        self._conn.execute("BEGIN")
        try:
            self._conn.executemany("INSERT INTO q (rowid, x) VALUES (?, ?)", enumerate(words, start=1))
            stems: dict[int, list[str]] = {}
            for doc, term in self._conn.execute("SELECT doc, term FROM q_hits ORDER BY term"):
                stems.setdefault(doc, []).append(term)
        finally:
            self._conn.execute("DELETE FROM q")
            self._conn.execute("COMMIT")
        for i, word in enumerate(words, start=1):
            self._words[word] = tuple(dict.fromkeys(stems.get(i, ())))

    def hits(self, docs: list[tuple[int, str, str]], stems: list[str]) -> list[tuple[int, str, object, int]]:
        """(doc, term, column, count) for these (rowid, content, tags) documents, as
        entries_fts_hits gives them for the same rows: tokenised here by the same tokenizer."""
        marks = ", ".join("?" for _ in stems)
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany("INSERT INTO d (rowid, content, tags) VALUES (?, ?, ?)", docs)
                return self._conn.execute(f"SELECT doc, term, col, COUNT(*) FROM d_hits WHERE term IN ({marks}) "
                                          "GROUP BY doc, term, col", stems).fetchall()
            finally:
                self._conn.execute("INSERT INTO d (d) VALUES ('delete-all')")
                self._conn.execute("COMMIT")


def entry_count(conn: sqlite3.Connection) -> int:
    """How many entries there are (at least 1): BM25's N. A scan of an index: read it once per search."""
    return conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0] or 1


def selective_terms(conn: sqlite3.Connection, words: list[str], stemmer: QueryStemmer,
                    max_share: float = 0.1, keep: int = 2, *, total: int | None = None) -> list[str]:
    """The query words worth a MATCH: those whose stem is in at most `max_share` of all entries
    (a word in most memories adds little to BM25 but makes FTS5 score most of the index). The
    `keep` rarest words always stay. Every word still counts when the candidates are rescored."""
    if len(words) <= keep:
        return words
    total = entry_count(conn) if total is None else total
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


def rescore(conn: sqlite3.Connection, stems: list[str], rowids: list[int], stemmer: QueryStemmer, *,
            total: int | None = None, docs: list[tuple[int, str, str]] | None = None
            ) -> dict[int, tuple[float, float]]:
    """For each candidate row: BM25 (b = 0) for the stemmed query terms, and its keyword coverage,
    the share of the query's IDF weight among the terms it contains (0..1: 1 when every query term
    is in it; a term no entry holds weighs as much as the rarest possible one).

    Term counts come from the index (entries_fts_hits, which reads every occurrence of each term
    in every entry) or, when the terms occur more than `SCAN_PER_DOC` times per candidate, from
    the candidates' own text tokenised by `stemmer` (the same counts, at a cost per candidate):
    `docs`, their (rowid, content, tags) when the caller has just read them, else read here."""
    if not stems or not rowids:
        return {}
    term_marks = ", ".join("?" for _ in stems)
    total = entry_count(conn) if total is None else total
    stats = conn.execute(f"SELECT term, doc, cnt FROM entries_fts_terms WHERE term IN ({term_marks})", stems).fetchall()
    frequency = {term: doc for term, doc, _ in stats}
    idf = {term: math.log(1 + (total - frequency.get(term, 0) + 0.5) / (frequency.get(term, 0) + 0.5))
           for term in set(stems)}
    query_weight = sum(idf.values()) or 1.0
    doc_marks = ", ".join("?" for _ in rowids)
    if sum(cnt for _, _, cnt in stats) > SCAN_PER_DOC * len(rowids):
        if docs is None:
            docs = conn.execute(f"SELECT rowid, content, tags FROM entries WHERE rowid IN ({doc_marks})",
                                rowids).fetchall()
        hits = stemmer.hits(docs, stems)
    else:
        hits = conn.execute(f"SELECT doc, term, col, COUNT(*) FROM entries_fts_hits WHERE term IN ({term_marks}) "
                            f"AND doc IN ({doc_marks}) GROUP BY doc, term, col", [*stems, *rowids]).fetchall()
    frequencies: dict[tuple[int, str], float] = {}
    for doc, term, col, count in hits:
        weight = COLUMN_WEIGHTS.get(col if isinstance(col, int) else (0 if col == "content" else 1), 0.5)
        frequencies[(doc, term)] = frequencies.get((doc, term), 0.0) + weight * count
    scores: dict[int, tuple[float, float]] = {}
    for (doc, term), tf in frequencies.items():
        score, covered = scores.get(doc, (0.0, 0.0))
        scores[doc] = (score + idf[term] * tf * (K1 + 1) / (tf + K1), covered + idf[term] / query_weight)
    return scores
