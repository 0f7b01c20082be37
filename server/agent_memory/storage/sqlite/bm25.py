"""BM25 without document-length normalisation (b = 0), over FTS5's own tokens.

FTS5's `bm25()` fixes b = 0.75, which penalises long memories; for short conversational memories
a term's presence matters more than the memory's length. Candidates still come from FTS5
(`MATCH`, best-first by its bm25); this rescoring reads term statistics from fts5vocab views, and
stems the query with the same `porter unicode61` tokenizer, so terms line up exactly.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from collections import Counter, OrderedDict

from agent_memory.storage.frame.search import MATCH_BUDGET, MIN_ENTRIES_TO_PRUNE, rarest

K1 = 1.2
COLUMN_WEIGHTS = {0: 1.0, 1: 0.5}  # content, tags
STEM_CACHE = 50_000  # words whose stems are remembered (most recently used)
DOC_CACHE = 20_000  # documents whose term counts are remembered (until their text changes)
TERM_CACHE = 50_000  # terms whose index statistics are remembered (until the index changes)
SCAN_PER_DOC = 40  # see `rescore`: above this many term occurrences per candidate, tokenise the candidates
# unicode61's token characters among ASCII: letters and digits, nothing else (case folded).
_ASCII_WORD = re.compile(r"[0-9A-Za-z]+")


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
        # rowid -> (content, tags, weighted count of each stem): valid while the text is the same
        self._docs: OrderedDict[int, tuple[str, str, dict[str, float]]] = OrderedDict()  # recent last

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

    def counts(self, docs: list[tuple[int, str, str]], stems: list[str]) -> dict[tuple[int, str], float]:
        """The weighted occurrences (`COLUMN_WEIGHTS`) of each of `stems` in each of these (rowid,
        content, tags) documents, as the index counts them. An ASCII document is split into words
        here (unicode61's token characters there are exactly [0-9A-Za-z], case folded) and each
        word is stemmed by FTS5 once; the document's counts are kept until its text changes. Any
        other document is tokenised by FTS5 itself (`hits`)."""
        wanted = list(dict.fromkeys(stems))  # in the caller's (FTS5's) order: sums add up as `hits`' do
        out: dict[tuple[int, str], float] = {}
        other, fresh = [], []
        with self._lock:
            for doc in docs:
                rowid, content, tags = doc
                known = self._docs.get(rowid)
                if known is not None and known[0] == content and known[1] == tags:
                    self._docs.move_to_end(rowid)
                    _pick(out, rowid, known[2], wanted)
                elif content.isascii() and tags.isascii():
                    fresh.append((doc, [(Counter(_ASCII_WORD.findall(text.lower())), COLUMN_WEIGHTS[col])
                                        for col, text in ((0, content), (1, tags))]))
                else:
                    other.append(doc)
            # The words never seen before, of all these documents at once: one pass through FTS5.
            new = dict.fromkeys(w for _, columns in fresh for words, _ in columns for w in words
                                if w not in self._words)
            if new:
                self._stem(list(new))
            for (rowid, content, tags), columns in fresh:
                tally = self._tally(columns)
                self._docs[rowid] = (content, tags, tally)
                if len(self._docs) > DOC_CACHE:
                    self._docs.popitem(last=False)
                _pick(out, rowid, tally, wanted)
        if other:
            for doc, term, col, count in self.hits(other, wanted):
                weight = COLUMN_WEIGHTS.get(col if isinstance(col, int) else (0 if col == "content" else 1), 0.5)
                out[(doc, term)] = out.get((doc, term), 0.0) + weight * count
        return out

    def _tally(self, columns: list[tuple[Counter[str], float]]) -> dict[str, float]:
        """Weighted count of every stem of a document's words (each column's words counted, and
        its weight), all of them stemmed already (called holding the lock)."""
        stems_of = self._words
        tally: dict[str, float] = {}
        for words, weight in columns:
            for word, n in words.items():
                for stem in stems_of[word]:
                    tally[stem] = tally.get(stem, 0.0) + weight * n
        return tally

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


def _pick(out: dict[tuple[int, str], float], rowid: int, tally: dict[str, float], wanted: list[str]) -> None:
    for stem in wanted:
        if stem in tally:
            out[(rowid, stem)] = tally[stem]


class TermStats:
    """BM25's statistics of the whole index (how many entries; per term, how many entries hold it
    and how often it occurs), read once and kept while the index is unchanged: FTS5's structure
    record (one row, read by its key) changes with every write to the index, by any connection,
    while audit events and other writes that leave the index alone keep what was read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: bytes | None = None
        self._total: int | None = None
        self._terms: dict[str, tuple[int, int]] = {}

    def _current(self, conn: sqlite3.Connection) -> None:
        row = conn.execute("SELECT block FROM entries_fts_data WHERE id = 10").fetchone()
        version = bytes(row[0]) if row is not None and row[0] is not None else None
        if version is None or version != self._version:
            self._version, self._total, self._terms = version, None, {}

    def total(self, conn: sqlite3.Connection) -> int:
        """How many entries there are (at least 1): BM25's N."""
        with self._lock:
            self._current(conn)
            if self._total is None:
                self._total = entry_count(conn)
            return self._total

    def terms(self, conn: sqlite3.Connection, stems: list[str]) -> dict[str, tuple[int, int]]:
        """term -> (entries holding it, its occurrences) for each of `stems` ((0, 0): in none)."""
        with self._lock:
            self._current(conn)
            missing = [s for s in dict.fromkeys(stems) if s not in self._terms]
            if missing:
                if len(self._terms) + len(missing) > TERM_CACHE:
                    self._terms = {}
                marks = ", ".join("?" for _ in missing)
                found = {term: (doc, cnt) for term, doc, cnt in conn.execute(
                    f"SELECT term, doc, cnt FROM entries_fts_terms WHERE term IN ({marks})", missing)}
                for stem in missing:
                    self._terms[stem] = found.get(stem, (0, 0))
            return {s: self._terms[s] for s in stems}


def entry_count(conn: sqlite3.Connection) -> int:
    """How many entries there are (at least 1): BM25's N. A scan of an index: read it once per search."""
    return conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0] or 1


def selective_terms(conn: sqlite3.Connection, words: list[str], stemmer: QueryStemmer,
                    max_share: float = 0.1, keep: int = 2, *, total: int | None = None,
                    stats: TermStats | None = None, budget: int = MATCH_BUDGET) -> list[str]:
    """The query words worth a MATCH: the `keep` rarest always, then the next rarest while each
    word's stem is in at most `max_share` of all entries and all of them together in at most
    `budget` more (a word in many memories adds little to BM25 but makes FTS5 score them all).
    Every word still counts when the candidates are rescored."""
    if len(words) <= keep:
        return words
    stats = stats or TermStats()
    total = stats.total(conn) if total is None else total
    if total < MIN_ENTRIES_TO_PRUNE:
        return words  # a small index is cheap to score in full
    stems = {word: stemmer.terms([word]) for word in words}
    wanted = sorted({s for found in stems.values() for s in found})
    if not wanted:
        return words
    df = {term: doc for term, (doc, _) in stats.terms(conn, wanted).items()}
    rarity = {word: max((df.get(s, 0) for s in found), default=0) for word, found in stems.items()}
    chosen = rarest(words, rarity, keep, max_share * total, budget)
    return [w for w in words if w in chosen]


def rescore(conn: sqlite3.Connection, stems: list[str], rowids: list[int], stemmer: QueryStemmer, *,
            total: int | None = None, docs: list[tuple[int, str, str]] | None = None,
            stats: TermStats | None = None) -> dict[int, tuple[float, float]]:
    """For each candidate row: BM25 (b = 0) for the stemmed query terms, and its keyword coverage,
    the share of the query's IDF weight among the terms it contains (0..1: 1 when every query term
    is in it; a term no entry holds weighs as much as the rarest possible one).

    Term counts come from the candidates' own text, counted by `stemmer` (and kept there), when the
    caller has just read it (`docs`: their rowid, content and tags) or the terms occur more than
    `SCAN_PER_DOC` times per candidate (then read here); else from the index (entries_fts_hits,
    which reads every occurrence of each term in every entry): the same counts either way. The
    index's statistics come from `stats`, kept while nothing is committed."""
    if not stems or not rowids:
        return {}
    term_marks = ", ".join("?" for _ in stems)
    stats = stats or TermStats()
    total = stats.total(conn) if total is None else total
    known = stats.terms(conn, stems)
    idf = {term: math.log(1 + (total - known[term][0] + 0.5) / (known[term][0] + 0.5)) for term in set(stems)}
    query_weight = sum(idf.values()) or 1.0
    doc_marks = ", ".join("?" for _ in rowids)
    frequencies: dict[tuple[int, str], float] = {}
    if docs is not None or sum(cnt for _, cnt in known.values()) > SCAN_PER_DOC * len(rowids):
        if docs is None:
            docs = conn.execute(f"SELECT rowid, content, tags FROM entries WHERE rowid IN ({doc_marks})",
                                rowids).fetchall()
        frequencies = stemmer.counts(docs, stems)
    else:
        hits = conn.execute(f"SELECT doc, term, col, COUNT(*) FROM entries_fts_hits WHERE term IN ({term_marks}) "
                            f"AND doc IN ({doc_marks}) GROUP BY doc, term, col", [*stems, *rowids]).fetchall()
        for doc, term, col, count in hits:
            weight = COLUMN_WEIGHTS.get(col if isinstance(col, int) else (0 if col == "content" else 1), 0.5)
            frequencies[(doc, term)] = frequencies.get((doc, term), 0.0) + weight * count
    scores: dict[int, tuple[float, float]] = {}
    for (doc, term), tf in frequencies.items():
        score, covered = scores.get(doc, (0.0, 0.0))
        scores[doc] = (score + idf[term] * tf * (K1 + 1) / (tf + K1), covered + idf[term] / query_weight)
    return scores
