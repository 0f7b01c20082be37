"""FTS5 query syntax: the keyword terms of a question (core/recall/query_terms.py) as a MATCH expression."""

from __future__ import annotations


def fts_query(terms: list[str]) -> str | None:
    """An FTS5 MATCH expression: each term quoted (so no user text is ever FTS syntax), OR-ed."""
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms if term]
    return " OR ".join(quoted) if quoted else None
