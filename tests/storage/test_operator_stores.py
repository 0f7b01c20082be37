"""The `OperatorStore` contract (what export, import, stats, audit and erase read) on SQLite and
PostgreSQL, each opened through the composition root as the operator commands open it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_memory.bootstrap import Records, open_records
from agent_memory.core.access.visibility import Area
from agent_memory.core.memories.crud import CrudService
from agent_memory.core.model.clock import utc_now
from agent_memory.core.model.commands import EntryChange, NewEntry
from agent_memory.core.model.cursor import CursorCodec
from agent_memory.core.model.errors import Conflict
from agent_memory.core.model.models import Layer, Scope
from agent_memory.core.model.rules import Limits
from agent_memory.core.ports import AuditQuery, PartitionCount
from tests.conftest import make_settings
from tests.storage.stores import ALICE, CAROL

pytestmark = pytest.mark.anyio


@dataclass
class Opened:
    records: Records
    crud: CrudService


@pytest.fixture(params=["sqlite", "postgres"])
async def opened(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opened]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else ""
    settings = make_settings(tmp_path / "data", backend=request.param, postgres_url=url)
    async with open_records(settings) as records:
        audit = records.store.audit_log()
        audit.start()
        try:
            yield Opened(records, CrudService(records.repo, audit, CursorCodec(b"k" * 32), Limits(), utc_now,
                                              records.redactor))
        finally:
            await audit.aclose()


async def test_operator_reads_on_either_store(opened: Opened) -> None:
    crud, store = opened.crud, opened.records.operator
    first = await crud.create(ALICE, Scope.AGENT, "alice", NewEntry("first"))
    second = await crud.create(ALICE, Scope.AGENT, "alice", NewEntry("second", layer=Layer.WORKING))
    team = await crud.create(CAROL, Scope.TEAM, "red/ops", NewEntry("a team fact", layer=Layer.LONG_TERM))
    await crud.update(ALICE, Scope.AGENT, "alice", EntryChange(first.id, {"content": "first, again"}))
    with pytest.raises(Conflict):
        await crud.update(ALICE, Scope.AGENT, "alice", EntryChange(second.id, {"content": "x"}, if_match="stale"))

    counts = sorted(await store.partition_counts(None), key=lambda c: (c.scope, c.namespace, c.layer))
    assert [c.scope for c in counts] == ["agent", "agent", "team"]
    assert sum(c.entries for c in counts) == 4 and sum(c.conflicts for c in counts) == 1
    assert PartitionCount("team", "red/ops", "long_term", 1, 0, 0) in counts
    only_team = await store.partition_counts((Area(Scope.TEAM, "red", subtree=True),))
    assert [(c.namespace, c.entries) for c in only_team] == [("red/ops", 1)]

    in_order = await store.entries_after(None, 0, 10)
    assert [e.id for _, e in in_order][:3] == [first.id, second.id, team.id]  # storage (write) order
    positions = [p for p, _ in in_order]
    assert positions == sorted(positions) and len(set(positions)) == 4
    rest = await store.entries_after(None, positions[1], 10)
    assert [e.id for _, e in rest][0] == team.id
    assert [e.id for _, e in await store.entries_after(Area(Scope.TEAM, "red/ops"), 0, 10)] == [team.id]

    assert await store.stored_ids([first.id, "mem_gone", team.id]) == {first.id, team.id}
    assert await store.stored_ids([]) == set()
    assert await store.vector_backlog() == 5  # three creates, one update, one conflict entry
    # One caller's share: the changes queued for entries inside its areas only.
    assert await store.vector_backlog((Area(Scope.TEAM, "red", subtree=True),)) == 1
    assert await store.vector_backlog((Area(Scope.AGENT, "alice", owner="alice"),)) == 4
    assert await store.vector_backlog(()) == 0
    assert await store.pending_vector_changes([first.id]) == 2
    assert await store.stored_vectors() == 0

    await crud.read(ALICE, Scope.AGENT, "alice", first.id)
    await opened.crud._audit.flush()  # noqa: SLF001 - reads are audited in batches
    rows = await store.audit_rows(AuditQuery(agent="alice"))
    assert [r["action"] for r in rows] == ["create", "create", "update", "update", "read"]
    assert rows[3]["outcome"] == "conflict" and isinstance(rows[3]["details"], dict)
    assert [r["entry_id"] for r in await store.audit_rows(AuditQuery(entry_id=team.id))] == [team.id]
    newest = await store.audit_rows(AuditQuery(agent="alice", limit=2))  # the newest two, oldest first
    assert [r["seq"] for r in newest] == [r["seq"] for r in rows[-2:]]
    assert await store.audit_rows(AuditQuery(action="delete")) == []
    size = await store.storage_bytes()
    assert size is not None and size > 0
