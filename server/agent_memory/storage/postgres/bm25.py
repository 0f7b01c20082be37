"""BM25 without document-length normalisation (b = 0) over the `search` tsvector, as on SQLite
(`agent_memory.storage.sqlite.bm25`): the same K1, column weights (content 1.0, tags 0.5), IDF and
keyword coverage, computed from PostgreSQL's own lexemes (the `english` configuration of the
`search` column, so query terms line up with the index exactly).

PostgreSQL keeps no per-term document counts the way FTS5's vocabulary tables do, and `ts_rank`
has no IDF at all. So:
- while the table is small (under `EXACT_BELOW` entries, by the planner's estimate) N and each
  term's document frequency are counted exactly, in one pass over the table;
- on a larger table N is the planner's estimate (`reltuples` scaled to the table's current size)
  and a term ANALYZE found common takes its sampled frequency (`pg_stats.most_common_elems`): those
  are exactly the terms whose exact count would read thousands of rows (tens of ms per query at
  100k entries, against under 2 ms; the IDFs differ by 0.4% in the median, 5% at most, on LoCoMo's
  queries). Every other term (rarer than ANALYZE's cut-off, or new since) is still counted exactly,
  through the GIN index, which is cheap because it is rare. A table never vacuumed nor analysed
  (no estimate) is counted in full.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict

import psycopg

from agent_memory.storage.frame.search import MATCH_BUDGET, MIN_ENTRIES_TO_PRUNE, rarest

K1 = 1.2  # as SQLite's
TAGS_WEIGHT = 0.5  # content counts 1.0, as SQLite's column weights
CONFIG = "english"  # the text search configuration of entry_search_vector (migration 001)
EXACT_BELOW = 5000  # entries (estimated): count N and every document frequency exactly
LEXEME_CACHE = 10_000  # words whose lexemes are remembered (most recently used)

_LEXEMES = (f"SELECT w, ARRAY(SELECT lexeme FROM unnest(to_tsvector('{CONFIG}', w)) ORDER BY 1) "
            "FROM unnest(%s::text[]) AS w")
# The planner's estimate of the row count: reltuples scaled to the table's current size (-1: never
# vacuumed nor analysed).
_ESTIMATE = (
    "SELECT CASE WHEN reltuples < 0 OR relpages = 0 THEN reltuples ELSE reltuples / relpages "
    "* (pg_relation_size(oid) / current_setting('block_size')::int) END FROM pg_class WHERE oid = 'entries'::regclass"
)
# ANALYZE's sampled share of the rows holding each lexeme it found common (up to 1000 of them).
_COMMON = (
    "SELECT u.elem, u.freq FROM pg_stats s "
    "CROSS JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS u(elem, freq) "
    "WHERE s.schemaname = current_schema() AND s.tablename = 'entries' AND s.attname = 'search'"
)
COMMON_TTL_SECONDS = 60.0  # ANALYZE's findings are read again after this long (reading them: ~2 ms)
_COUNT = "(SELECT count(*) FROM entries WHERE search @@ %s::tsquery)"
_COUNT_IN_PASS = "count(*) FILTER (WHERE search @@ %s::tsquery)"
# Occurrences of the query lexemes in each entry: in all (the stored `search`, content then tags),
# and in its tags alone (tokenised again, as entry_search_vector does, only for entries with tags).
_HITS = (
    "SELECT e.seq, u.lexeme, array_length(u.positions, 1), CASE WHEN e.tags = '{}' THEN 0 ELSE "
    f"(SELECT array_length(t.positions, 1) FROM unnest(to_tsvector('{CONFIG}', array_to_string(e.tags, ' '))) AS t "
    "WHERE t.lexeme = u.lexeme) END FROM entries e CROSS JOIN LATERAL unnest(e.search) AS u "
    "WHERE e.seq = ANY(%s) AND u.lexeme = ANY(%s)"
)


def tsquery_term(lexeme: str) -> str:
    """`lexeme` as a tsquery literal matching exactly it: quoted, its quotes doubled and its
    backslashes escaped, so no character of it is ever tsquery syntax (`&`, `|`, `!`, `:*`...)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def any_of(lexemes: list[str]) -> str:
    """A tsquery literal matching entries holding any of `lexemes`."""
    return " | ".join(tsquery_term(lexeme) for lexeme in lexemes)


class Lexemes:
    """The lexemes PostgreSQL indexes for query words, asked of the server once per word."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._words: OrderedDict[str, tuple[str, ...]] = OrderedDict()  # word -> its lexemes, recent last

    def of(self, conn: psycopg.Connection, words: list[str]) -> dict[str, tuple[str, ...]]:
        """Each distinct word's lexemes (none for a stop word or punctuation). A NUL, which no
        PostgreSQL text holds, separates words as a space does."""
        distinct = list(dict.fromkeys(word.replace("\x00", " ") for word in words))
        with self._lock:
            new = [w for w in distinct if w not in self._words]
        found = dict(conn.execute(_LEXEMES, (new,)).fetchall()) if new else {}
        with self._lock:
            for word, lexemes in found.items():
                self._words[word] = tuple(lexemes)
            result = {}
            for word in distinct:
                result[word] = self._words[word] if word in self._words else tuple(found[word])
                if word in self._words:
                    self._words.move_to_end(word)
            while len(self._words) > LEXEME_CACHE:
                self._words.popitem(last=False)
        return result


class CommonTerms:
    """ANALYZE's frequent lexemes and their sampled frequencies, read at most every
    `COMMON_TTL_SECONDS` (autovacuum analyses a table after a tenth of it changed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read_at = -COMMON_TTL_SECONDS
        self._frequencies: dict[str, float] = {}

    def frequencies(self, conn: psycopg.Connection) -> dict[str, float]:
        with self._lock:
            if time.monotonic() - self._read_at < COMMON_TTL_SECONDS:
                return self._frequencies
        found = dict(conn.execute(_COMMON).fetchall())
        with self._lock:
            self._frequencies, self._read_at = found, time.monotonic()
        return found


def term_stats(conn: psycopg.Connection, lexemes: list[str], common: CommonTerms) -> tuple[int, dict[str, int]]:
    """N (at least 1) and the document frequency of each lexeme (see the module's docstring)."""
    estimate = conn.execute(_ESTIMATE).fetchone()[0]
    if estimate < EXACT_BELOW:
        # One pass: counted one by one, a common term may each make the planner scan the table.
        counts = conn.execute(f"SELECT count(*), {', '.join(_COUNT_IN_PASS for _ in lexemes)} FROM entries",
                              [tsquery_term(lex) for lex in lexemes], prepare=False).fetchone()
        return max(int(counts[0]), 1), dict(zip(lexemes, map(int, counts[1:]), strict=True))
    total = max(int(estimate), 1)
    frequencies = common.frequencies(conn)
    df = {lex: min(total, round(frequencies[lex] * total)) for lex in lexemes if lex in frequencies}
    rare = [lex for lex in lexemes if lex not in df]
    if rare:
        # Never a prepared statement's generic plan: how to count depends on how rare each term is.
        counts = conn.execute(f"SELECT {', '.join(_COUNT for _ in rare)}", [tsquery_term(lex) for lex in rare],
                              prepare=False).fetchone()
        df.update(zip(rare, map(int, counts), strict=True))
    return total, df


def idf(total: int, df: dict[str, int]) -> dict[str, float]:
    return {lex: math.log(1 + (total - n + 0.5) / (n + 0.5)) for lex, n in df.items()}


def selective(lexemes: list[str], df: dict[str, int], total: int, max_share: float = 0.1, keep: int = 2,
              budget: int = MATCH_BUDGET) -> list[str]:
    """The lexemes worth matching on, as SQLite's `selective_terms`: on a store of
    `MIN_ENTRIES_TO_PRUNE` entries or more, always the `keep` rarest, then the next rarest while
    each is in at most `max_share` of the entries and all of them together in at most `budget`
    more (every matching entry is ranked by `ts_rank`, once per lexeme: at 100,000 entries a
    query's common words matched 7,000 entries and took 14-50 ms; within 5,000, 6 ms, with 99.8%
    of the top 10 unchanged). Every lexeme still counts in the ranking and the scores."""
    if len(lexemes) <= keep or total < MIN_ENTRIES_TO_PRUNE:
        return lexemes
    chosen = rarest(lexemes, df, keep, max_share * total, budget)
    return [lex for lex in lexemes if lex in chosen]


def rescore(conn: psycopg.Connection, weights: dict[str, float], seqs: list[int]) -> dict[int, tuple[float, float]]:
    """For each entry (by seq) holding a query lexeme: BM25 (b = 0) and its keyword coverage, the
    share of the query's IDF weight among the lexemes it holds (0..1). `weights`: each query
    lexeme's IDF."""
    if not weights or not seqs:
        return {}
    lexemes = sorted(weights)
    query_weight = sum(weights.values()) or 1.0
    frequencies: dict[tuple[int, str], float] = {}
    for seq, lexeme, count, in_tags in conn.execute(_HITS, (seqs, lexemes)):
        in_tags = min(int(in_tags or 0), int(count or 0))
        frequencies[(int(seq), lexeme)] = int(count or 0) - in_tags + TAGS_WEIGHT * in_tags
    scores: dict[int, tuple[float, float]] = {}
    for (seq, lexeme), tf in frequencies.items():
        score, covered = scores.get(seq, (0.0, 0.0))
        scores[seq] = (score + weights[lexeme] * tf * (K1 + 1) / (tf + K1), covered + weights[lexeme] / query_weight)
    return scores
