"""The FTS5 query built from a question's terms: every term quoted, so no user text is FTS syntax."""

from __future__ import annotations

import sqlite3

from agent_memory.core.recall.query_terms import keyword_terms
from agent_memory.storage.sqlite.fts import fts_query


def test_terms_are_quoted_and_or_ed() -> None:
    assert fts_query(["deploy", 'say "hi"', ""]) == '"deploy" OR "say ""hi"""'
    assert fts_query([]) is None and fts_query([""]) is None


def test_fts_syntax_in_a_question_matches_as_plain_words() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5(content)")
    conn.executemany("INSERT INTO docs (content) VALUES (?)",
                     [("NEAR the deploy key",), ("content column",), ("nothing here",)])
    for question in ('NEAR(deploy key) AND "', "content: deploy*", "NOT ^deploy OR -key"):
        match = fts_query(keyword_terms(question))
        assert match is not None
        found = {row[0] for row in conn.execute("SELECT content FROM docs WHERE docs MATCH ?", (match,))}
        assert found and "nothing here" not in found, question
    terms = ['a"b', "x*", "(y)", "NEAR"]
    conn.execute("SELECT count(*) FROM docs WHERE docs MATCH ?", (fts_query(terms),)).fetchone()  # no syntax error
