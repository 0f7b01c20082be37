"""PostgreSQL's RetrievalStore gives what SQLite's gives: the same candidates with the same BM25
(b = 0) scores and keyword coverage, the same visibility and filters, the same pending snapshot;
query words are only ever text; and an entry holding the rare query terms outranks one holding a
common one. Both stores are real (a SQLite file, a PostgreSQL from tests/postgres.py) and hold the
same entries, written in the same order."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from agent_memory.core.access.visibility import Area, readable_areas
from agent_memory.core.model.ids import new_entry_id, new_etag
from agent_memory.core.model.models import Caller, Entry, Layer, Priority, Scope, Source, SystemType
from agent_memory.core.ports import CandidateFilter, RetrievalStore

pytestmark = pytest.mark.anyio

NOW = "2026-03-01T00:00:00.000Z"
ALICE = Caller("alice", SystemType.SYS1, "red")
# Words whose Porter (SQLite) and Snowball (PostgreSQL) stems agree.
TEXTS = [
    "Caroline went to the pottery workshop on Saturday",
    "Melanie painted a sunrise over the lake",
    "the lake was calm and the lake was cold",
    "Caroline joined a support group for painters",
    "running a marathon with the kids",
    "pottery pottery pottery class with the kids",
    "a recipe for lemon cake",
    "the violin concert was loud",
]


@dataclass
class Stores:
    sqlite: RetrievalStore
    postgres: RetrievalStore
    entries: list[Entry]
    pg_db: object


def _entry(content: str, *, scope: Scope = Scope.AGENT, namespace: str = "alice", owner: str = "alice",
           team: str | None = "red", **changes: object) -> Entry:
    entry = Entry(id=new_entry_id(), scope=scope, namespace=namespace, team=team, owner_agent_id=owner,
                  content=content, tags=(), priority=Priority.MEDIUM, source=Source.MANUAL, confidence=1.0,
                  layer=Layer.WORKING if scope is Scope.AGENT else Layer.LONG_TERM,
                  created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z", expires_at=None,
                  version=1, etag=new_etag())
    return replace(entry, **changes)


def corpus() -> list[Entry]:
    entries = [_entry(text, created_at=f"2026-01-0{i + 1}T00:00:00.000Z") for i, text in enumerate(TEXTS)]
    entries += [
        _entry("pottery glaze notes", tags=("kids", "art"), layer=Layer.LONG_TERM, session_id="s1"),
        _entry("pottery kiln schedule", tags=("art",), session_id="s1"),
        _entry("expired pottery memory", expires_at="2026-02-01T00:00:00.000Z"),
        _entry("pottery fact that was replaced", superseded_by="mem_newer"),
        _entry("conflicting pottery claim", conflict=True, conflict_of="mem_x"),
        _entry("compacted pottery turns", compacted=True),
        _entry("pottery in a sub namespace", namespace="alice/projects"),
        _entry("pottery written by bob", namespace="bob", owner="bob"),
        _entry("pottery of alice in blue team", team="blue"),
        _entry("team pottery guide", scope=Scope.TEAM, namespace="red", owner="carol", layer=Layer.LONG_TERM),
        _entry("team pottery in the Red namespace", scope=Scope.TEAM, namespace="Red", owner="carol"),
        _entry("team pottery under red_x", scope=Scope.TEAM, namespace="red_x", owner="carol"),
        _entry("global pottery knowledge", scope=Scope.GLOBAL, namespace="shared", owner="carol", team=None),
        _entry("lake tagged", tags=("lake", "summer")),
    ]
    return entries


async def _write(repo: object, entries: list[Entry], pending: set[int]) -> None:
    def work(tx: object) -> None:
        for i, entry in enumerate(entries):
            tx.insert(entry)  # type: ignore[attr-defined]
            if i in pending:
                tx.enqueue_vector(entry, "upsert")  # type: ignore[attr-defined]
        tx.enqueue_vector(entries[0], "delete")  # type: ignore[attr-defined]  # a delete is not pending

    await repo.transact(work)  # type: ignore[attr-defined]


PENDING = {1, 3, 9, 16, 20}


@pytest.fixture
async def stores(tmp_path: Path, postgres_url: str) -> AsyncIterator[Stores]:
    from agent_memory.storage.postgres.database import PostgresDatabase
    from agent_memory.storage.postgres.entries import PostgresEntryRepository
    from agent_memory.storage.postgres.migrations import migrate as pg_migrate
    from agent_memory.storage.postgres.search import PostgresRetrievalStore
    from agent_memory.storage.sqlite.database import Database
    from agent_memory.storage.sqlite.entries import SqliteEntryRepository
    from agent_memory.storage.sqlite.migrations import migrate
    from agent_memory.storage.sqlite.search import SqliteRetrievalStore

    entries = corpus()
    db = Database(tmp_path / "s.db")
    await db.open()
    pg = PostgresDatabase(postgres_url, pool_size=2)
    await pg.open()
    try:
        await migrate(db)
        await pg_migrate(pg)
        await _write(SqliteEntryRepository(db), entries, PENDING)
        await _write(PostgresEntryRepository(pg), entries, PENDING)
        yield Stores(SqliteRetrievalStore(db), PostgresRetrievalStore(pg), entries, pg)
    finally:
        await pg.close()
        await db.close()


def _by_id(hits: list[tuple[Entry, int, float, float]]) -> dict[str, tuple[float, float]]:
    return {entry.id: (round(score, 9), round(coverage, 9)) for entry, _, score, coverage in hits}


def _rounded(scores: dict[int, tuple[float, float]]) -> dict[int, tuple[float, float]]:
    return {seq: (round(score, 9), round(coverage, 9)) for seq, (score, coverage) in scores.items()}


AREAS = {
    "alice": readable_areas(ALICE),
    "alice-agent-only": readable_areas(ALICE, (Scope.AGENT,)),
    "sys4": readable_areas(Caller("dave", SystemType.SYS4, "red")),
    "team-red-subtree": (Area(Scope.TEAM, "red", subtree=True),),
    "nothing": (),
}
FILTERS = {
    "plain": CandidateFilter(now=NOW),
    "superseded": CandidateFilter(now=NOW, include_superseded=True),
    "long-term": CandidateFilter(now=NOW, layers=(Layer.LONG_TERM,)),
    "tags": CandidateFilter(now=NOW, tags=("kids", "art")),
    "tag": CandidateFilter(now=NOW, tags=("art",)),
    "session": CandidateFilter(now=NOW, session_id="s1"),
    "since-until": CandidateFilter(now=NOW, since="2026-01-02T00:00:00.000Z", until="2026-01-05T00:00:00.000Z"),
    "before-expiry": CandidateFilter(now="2026-01-15T00:00:00.000Z"),
}
QUERIES = [["pottery"], ["lake", "sunrise"], ["caroline", "support", "group"], ["kids"], ["summer", "art"],
           ["zzz"], ["pottery", "lake", "kids", "marathon", "violin"]]


@pytest.mark.parametrize("area", list(AREAS))
@pytest.mark.parametrize("filters", list(FILTERS))
async def test_keyword_candidates_are_sqlites(stores: Stores, area: str, filters: str) -> None:
    areas, f = AREAS[area], FILTERS[filters]
    for terms in QUERIES:
        for namespaces in ((), ("alice", "red")):
            lite_parts, lite = await stores.sqlite.readable_keyword_candidates(terms, areas, namespaces, f, 50)
            pg_parts, pg = await stores.postgres.readable_keyword_candidates(terms, areas, namespaces, f, 50)
            assert sorted(pg_parts, key=str) == sorted(lite_parts, key=str)
            assert _by_id(pg) == _by_id(lite), (terms, namespaces)
            # Best first: by the score returned.
            assert [hit[2] for hit in pg] == sorted((hit[2] for hit in pg), reverse=True)
            if pg_parts:
                again = await stores.postgres.keyword_candidates(terms, pg_parts, areas, f, 50)
                assert _by_id(again) == _by_id(pg)
                top = await stores.postgres.keyword_candidates(terms, pg_parts, areas, f, 2)
                assert len(top) == min(2, len(pg)) and {e.id for e, *_ in top} <= {e.id for e, *_ in pg}


async def test_visibility_is_exact_and_case_sensitive(stores: Stores) -> None:
    _, hits = await stores.postgres.readable_keyword_candidates(["pottery"], AREAS["alice"], (), FILTERS["plain"], 50)
    contents = {e.content for e, *_ in hits}
    assert "team pottery guide" in contents and "pottery in a sub namespace" in contents
    _, hits = await stores.postgres.readable_keyword_candidates(["pottery"], AREAS["sys4"], (), FILTERS["plain"], 50)
    assert "global pottery knowledge" in {e.content for e, *_ in hits}
    for hidden in ("global pottery knowledge", "expired pottery memory", "pottery fact that was replaced",
                   "conflicting pottery claim",
                   "compacted pottery turns", "pottery written by bob", "pottery of alice in blue team",
                   "team pottery in the Red namespace", "team pottery under red_x"):
        assert hidden not in contents


async def test_scores_and_visible_entries_are_sqlites(stores: Stores) -> None:
    seq_of = {e.id: i + 1 for i, e in enumerate(stores.entries)}  # both number rows from 1, in write order
    seqs = list(seq_of.values())
    for terms in QUERIES + [["kids", "pottery"]]:
        assert _rounded(await stores.postgres.keyword_scores(terms, seqs)) == _rounded(
            await stores.sqlite.keyword_scores(terms, seqs))
    ids = [e.id for e in stores.entries] + ["mem_missing"]
    for area in AREAS.values():
        lite_parts, _ = await stores.sqlite.readable_keyword_candidates(["x"], area, (), FILTERS["plain"], 1)
        if not lite_parts:  # the core asks only with partitions to look in (SQLite's SQL needs one)
            assert await stores.postgres.visible_scored(ids, [], area, FILTERS["plain"], ["lake"]) == ([], {})
            continue
        for f in FILTERS.values():
            for terms in ([], ["pottery", "kids"]):
                lite_found, lite_scores = await stores.sqlite.visible_scored(ids, lite_parts, area, f, terms)
                pg_found, pg_scores = await stores.postgres.visible_scored(ids, lite_parts, area, f, terms)
                assert sorted((e.id, seq) for e, seq in pg_found) == sorted((e.id, seq) for e, seq in lite_found)
                assert _rounded(pg_scores) == _rounded(lite_scores)
    assert await stores.postgres.keyword_scores([], seqs) == {}
    assert await stores.postgres.visible_scored([], [], AREAS["alice"], FILTERS["plain"], ["x"]) == ([], {})


async def test_pending_entries_are_sqlites(stores: Stores) -> None:
    for area in AREAS.values():
        for f in FILTERS.values():
            for namespaces in ((), ("alice",)):
                for limit in (0, 1, 2, 64):
                    lite_parts, (lite, lite_total) = await stores.sqlite.partitions_and_pending(
                        area, namespaces, f, limit)
                    pg_parts, (pg, pg_total) = await stores.postgres.partitions_and_pending(
                        area, namespaces, f, limit)
                    assert sorted(pg_parts, key=str) == sorted(lite_parts, key=str)
                    assert [(e.id, seq) for e, seq in pg] == [(e.id, seq) for e, seq in lite]
                    assert pg_total == lite_total
    _, (waiting, total) = await stores.postgres.partitions_and_pending(AREAS["alice"], (), FILTERS["plain"], 64)
    # Newest first; not bob's, the blue team's, nor (for a sys1 caller) the global entry waiting too.
    assert total == 3 and [e.content for e, _ in waiting] == ["pottery kiln schedule", TEXTS[3], TEXTS[1]]


@pytest.mark.parametrize("word", [
    "a & b | !c", ":*", "pottery:*", "(pottery", "pottery)", "'pottery'", "''", "\\", "pottery\\", "!!", "|",
    "<->", "<2>", "lake & !pottery", "naïve", "日本語", "café", "\x00x", "' | '", "pottery' | 'lake", "a:b:c",
    "-", "'", "\"", "*", " ", "", "p" * 3000, "x\x00pottery",
])
async def test_query_words_are_only_text(stores: Stores, word: str) -> None:
    parts, _ = await stores.postgres.readable_keyword_candidates(["x"], AREAS["alice"], (), FILTERS["plain"], 1)
    hits = await stores.postgres.keyword_candidates([word, "zzz"], parts, AREAS["alice"], FILTERS["plain"], 10)
    # Matched as words only: "pottery' | 'lake" finds the entries holding pottery or lake.
    words = [w for w in ("pottery", "lake") if w in word]
    assert all(any(w in entry.content for w in words) for entry, *_ in hits)
    assert bool(hits) == bool(words)
    for _, _, score, coverage in hits:
        assert score > 0 and 0 < coverage < 1  # "zzz" is in no entry
    await stores.postgres.readable_keyword_candidates([word], AREAS["alice"], (), FILTERS["plain"], 10)
    await stores.postgres.keyword_scores([word], [1, 2, 3])
    await stores.postgres.visible_scored([stores.entries[0].id], parts, AREAS["alice"], FILTERS["plain"], [word])


async def test_rare_terms_outrank_a_common_one(stores: Stores) -> None:
    from agent_memory.storage.postgres.entries import PostgresEntryRepository

    filler = [_entry(f"weather report number {i} said the weather was fine") for i in range(40)]
    rare = _entry("the oboe recital in Lisbon")
    common = _entry("weather weather weather and more weather")
    await _write(PostgresEntryRepository(stores.pg_db), [*filler, common, rare], set())  # type: ignore[arg-type]
    parts, hits = await stores.postgres.readable_keyword_candidates(
        ["weather", "oboe", "lisbon"], AREAS["alice"], (), FILTERS["plain"], 100)
    assert hits[0][0].id == rare.id
    assert hits[0][3] > 0.8  # the rare terms hold most of the query's IDF weight
    scores = {e.id: (score, coverage) for e, _, score, coverage in hits}
    assert scores[common.id][0] < scores[rare.id][0] and scores[common.id][1] < 0.2
    top = await stores.postgres.keyword_candidates(["weather", "oboe", "lisbon"], parts, AREAS["alice"],
                                                   FILTERS["plain"], 1)
    assert [e.id for e, *_ in top] == [rare.id]  # the database's own order agrees


async def test_large_table_statistics_give_the_exact_scores(stores: Stores, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above `EXACT_BELOW`, N is the planner's estimate and common terms take ANALYZE's sampled
    frequencies; on a table ANALYZE read whole, those are the exact counts."""
    from agent_memory.storage.postgres import bm25
    from agent_memory.storage.postgres.entries import PostgresEntryRepository

    seqs = list(range(1, len(stores.entries) + 1))
    terms = ["pottery", "lake", "kids", "caroline", "violin", "zzz"]
    exact = await stores.postgres.keyword_scores(terms, seqs)
    await stores.pg_db.read(lambda conn: conn.execute("ANALYZE entries"))  # type: ignore[attr-defined]
    monkeypatch.setattr(bm25, "EXACT_BELOW", 0)

    def common(conn: object) -> list[str]:
        return conn.execute(  # type: ignore[attr-defined]
            "SELECT unnest(most_common_elems::text::text[]) FROM pg_stats WHERE tablename = 'entries' "
            "AND attname = 'search'").fetchall()

    assert ("potteri",) in await stores.pg_db.read(common)  # type: ignore[attr-defined]
    assert _rounded(await stores.postgres.keyword_scores(terms, seqs)) == _rounded(exact)
    # A lexeme ANALYZE has not seen is counted, whatever the table's size.
    new = [_entry("a zeppelin"), _entry("zeppelins")]
    await _write(PostgresEntryRepository(stores.pg_db), new, set())  # type: ignore[arg-type]
    total, df = await stores.pg_db.read(  # type: ignore[attr-defined]
        lambda conn: bm25.term_stats(conn, ["zeppelin", "potteri"], bm25.CommonTerms()))
    # N is the estimate from before those two; "pottery" keeps its sampled frequency.
    assert total == len(stores.entries) and df["zeppelin"] == 2
    assert df["potteri"] == sum("pottery" in e.content for e in stores.entries)


async def test_pending_count_and_rows_are_one_snapshot(stores: Stores) -> None:
    """While an applier takes entries off the outbox and writers put them back, every answer's
    count is the number of rows it holds (never a count of 4 with 3 rows)."""
    import anyio

    toggled = stores.entries[8]  # visible to alice, not pending at first
    stop = anyio.Event()

    async def churn() -> None:
        while not stop.is_set():
            await stores.pg_db.transact(lambda conn: conn.execute(  # type: ignore[attr-defined]
                "INSERT INTO vector_outbox (entry_id, op, scope, namespace, enqueued_at) "
                "VALUES (%s, 'upsert', 'agent', 'alice', 'now')", (toggled.id,)))
            await stores.pg_db.transact(lambda conn: conn.execute(  # type: ignore[attr-defined]
                "DELETE FROM vector_outbox WHERE entry_id = %s", (toggled.id,)))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(churn)
        for _ in range(150):
            _, (waiting, total) = await stores.postgres.partitions_and_pending(AREAS["alice"], (), FILTERS["plain"], 64)
            assert len(waiting) == total and total in (3, 4)
        stop.set()
