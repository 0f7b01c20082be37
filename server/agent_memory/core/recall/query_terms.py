"""Turning free user text into keyword terms and the names it mentions (a store turns the terms
into its own query syntax: storage/sqlite/fts.py for FTS5)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
MAX_TERMS = 32
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
now of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself yourselves s t d ll
m o re ve y ever also did does done got get gets let lets like may might must shall much many
""".split())


def words(text: str) -> list[str]:
    return [w.replace("’", "'") for w in WORD.findall(text)]


def keyword_terms(text: str) -> list[str]:
    """Distinct lowercase content words of `text`, in order (stopwords and 1-letter words out)."""
    seen: dict[str, None] = {}
    for word in words(text):
        lowered = word.lower().split("'")[0]
        if len(lowered) > 1 and lowered not in STOPWORDS:
            seen.setdefault(lowered, None)
    return list(seen)[:MAX_TERMS]


def mentioned_names(text: str) -> set[str]:
    """Capitalised words of the query that are not stopwords: likely names ("Caroline", "Paris")."""
    return _capitalised(words(text))


def _capitalised(found: list[str]) -> set[str]:
    return {w for w in found if w[:1].isupper() and w.lower() not in STOPWORDS and len(w) > 1}


CALENDAR = frozenset("""
january february march april may june july august september october november december jan feb mar apr
jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday today tomorrow
yesterday
""".split())


def unknown_share(query: str, candidates: Iterable[Any]) -> float:
    """The share of the names the query mentions (capitalised words past its first, not calendar
    words) that no candidate's content mentions: a question about someone or something the memory
    never names. 0 when the query names nothing."""
    names = {n.split("'")[0] for n in _capitalised(words(query)[1:])}
    names = {n for n in names if n.lower() not in CALENDAR}
    if not names:
        return 0.0
    patterns = {n: re.compile(rf"\b{re.escape(n)}\b", re.IGNORECASE) for n in names}
    # One search over all contents: a name is a single word, so no match can span the newline.
    contents = "\n".join(c.entry.content for c in candidates)
    unknown = [n for n, p in patterns.items() if not p.search(contents)]
    return len(unknown) / len(names)
