"""The storage ports' contract, run against the record stores: `sqlite` (a file), `list`
(`MEMORY_BACKEND=list`, in memory, gone at exit) and `postgres` (a real PostgreSQL with pgvector;
its entries and lists from its adapters, sessions and pruning through the composition root).
Every store must keep passing this suite (tests/storage/stores.py builds them;
test_entry_stores.py holds the rest of the entry contract)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.bootstrap import App, open_app, pruning_service
from agent_memory.core.model.commands import EntryChange, NewEntry, Removal
from agent_memory.core.model.errors import Conflict, NotFound
from agent_memory.core.model.models import Layer, ListFilters, Priority, Scope
from agent_memory.core.ports import Victim
from agent_memory.core.recall.retrieval import RetrievalRequest
from agent_memory.core.sessions.extract import Turn
from tests.conftest import make_settings
from tests.storage.stores import ALICE, Store

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["sqlite", "list", "postgres"])
async def app(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[App]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else ""
    settings = make_settings(tmp_path / "data", backend=request.param, reflection_interval_seconds=0,
                             prune_interval_seconds=0, compaction_threshold_chars=0, postgres_url=url)
    async with open_app(settings) as opened:
        yield opened
    assert (tmp_path / "data" / "memory.db").exists() is (request.param == "sqlite")


async def test_entries_round_trip_with_compare_and_swap(store: Store) -> None:
    made = await store.crud.create(ALICE, Scope.AGENT, "alice", NewEntry("first", tags=("a", "b"),
                                                                         priority=Priority.HIGH))
    assert await store.crud.read(ALICE, Scope.AGENT, "alice", made.id) == made
    changed = await store.crud.update(ALICE, Scope.AGENT, "alice", EntryChange(made.id, {"content": "second"},
                                                                               if_match=made.etag))
    assert (changed.version, changed.content) == (2, "second") and changed.etag != made.etag
    with pytest.raises(Conflict):
        await store.crud.update(ALICE, Scope.AGENT, "alice", EntryChange(made.id, {"content": "x"}, if_match=made.etag))
    with pytest.raises(Conflict):
        await store.crud.delete(ALICE, Scope.AGENT, "alice", Removal(made.id, if_match=made.etag))
    await store.crud.delete(ALICE, Scope.AGENT, "alice", Removal(made.id, if_match=changed.etag))
    with pytest.raises(NotFound):
        await store.crud.read(ALICE, Scope.AGENT, "alice", made.id)


async def test_list_filters_and_pages_newest_first(store: Store) -> None:
    ids = [(await store.crud.create(ALICE, Scope.AGENT, "alice",
                                    NewEntry(f"n{n}", tags=("even",) if n % 2 == 0 else (),
                                             layer=Layer.WORKING if n < 3 else None))).id for n in range(7)]
    pages, cursor = [], None
    while True:
        page = await store.crud.list(ALICE, Scope.AGENT, "alice", ListFilters(), cursor, 3)
        pages.append([e.id for e in page.items])
        cursor = page.next_cursor
        if cursor is None:
            break
    assert [i for p in pages for i in p] == ids[::-1] and [len(p) for p in pages] == [3, 3, 1]
    evens = await store.crud.list(ALICE, Scope.AGENT, "alice", ListFilters(tags=("even",)), None, 25)
    assert [e.id for e in evens.items] == [ids[6], ids[4], ids[2], ids[0]]
    working = await store.crud.list(ALICE, Scope.AGENT, "alice", ListFilters(layer=Layer.WORKING), None, 25)
    assert [e.id for e in working.items] == ids[:3][::-1]


async def test_sessions_compact_and_reflection_marks(app: App) -> None:
    turns = [Turn("user", f"I prefer option {n} for the build cache.") for n in range(6)]
    logged = await app.sessions.log(ALICE, "s", turns)
    compaction = await app.sessions.compact(ALICE, "s", keep_recent=2)
    assert compaction.compacted_ids == [e.id for e in logged.entries[:4]]
    assert [e.tags for e in compaction.summaries] == [("compaction", "turns:1-2"), ("compaction", "turns:3-4")]
    assert compaction.summary == compaction.summaries[-1]
    page = await app.crud.list(ALICE, Scope.AGENT, "alice", ListFilters(session_id="s"), None, 25)
    assert sum(e.compacted for e in page.items) == 4 and len(page.items) == 8
    # The next compaction numbers its turns after the ones compacted before.
    assert [e.tags[1] for e in (await app.sessions.compact(ALICE, "s", keep_recent=0)).summaries] == ["turns:5-6"]
    first = await app.reflection.reflect(ALICE, "s")
    assert first.turns == 6 and first.engine == "extractive"
    assert (await app.reflection.reflect(ALICE, "s")).turns == 0
    result = await app.retrieval.retrieve(ALICE, RetrievalRequest(query="option 1 build cache", mode="keyword"))
    assert not {i.entry.id for i in result.items} & set(compaction.compacted_ids)


async def test_pruning_plans_and_deletes(app: App) -> None:
    made = await app.crud.create(ALICE, Scope.AGENT, "alice", NewEntry("short lived", ttl_seconds=1))
    kept = await app.crud.create(ALICE, Scope.AGENT, "alice", NewEntry("kept"))
    later = pruning_service(app.settings, app.store, clock=lambda: datetime(2999, 1, 1, tzinfo=UTC))
    assert await later.prune(dry_run=True) == [Victim(made.id, "agent", "alice", made.etag, "expired")]
    await later.prune()
    page = await app.crud.list(ALICE, Scope.AGENT, "alice", ListFilters(include_expired=True), None, 25)
    assert [e.id for e in page.items] == [kept.id]
