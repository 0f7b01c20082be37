"""The audit sink on every store: no single event can stop it. An event holding text a store
cannot hold is written escaped and marked; an event the store refuses on its own is set aside (a
marker row in its place); the events around it are written either way."""

from __future__ import annotations

import json
import random
import string

import pytest

from agent_memory.core.model.models import AuditEvent
from tests.storage.stores import Store

pytestmark = pytest.mark.anyio

DETAILS_SQL = "SELECT agent_id, namespace, entry_id, details FROM audit ORDER BY seq"


def event(agent_id: str = "bob", **fields: object) -> AuditEvent:
    values: dict[str, object] = {
        "at": "2026-11-25T12:00:00.000Z", "request_id": "req_1", "agent_id": agent_id, "team": "red",
        "system_type": "sys1", "tool": "console", "action": "list", "scope": "team", "namespace": "red",
        "entry_id": None, "outcome": "ok", "details": {}}
    values.update(fields)
    return AuditEvent(**values)  # type: ignore[arg-type]


async def five_reads_by_bob(store: Store) -> None:
    for i in range(5):
        await store.audit.record(event("bob", action="read", entry_id=f"mem_{i}"))


async def rows_of(store: Store, agent_id: str) -> list[tuple]:
    await store.audit.flush()
    return [row for row in await store.query(DETAILS_SQL) if row[0] == agent_id]


async def test_a_nul_in_an_audit_event_is_written_escaped_and_marked_and_stops_no_other_event(store: Store) -> None:
    await store.audit.record(event("mallory", namespace="red\x00", entry_id="mem_\ud800",
                                   details={"path": "/console/api/entries?namespace=red\x00", "n\x00": ["\udfff"]}))
    await five_reads_by_bob(store)
    [(_, namespace, entry_id, details)] = await rows_of(store, "mallory")
    assert (namespace, entry_id) == ("red\\x00", "mem_\\ud800")
    assert json.loads(details) == {"path": "/console/api/entries?namespace=red\\x00", "n\\x00": ["\\udfff"],
                                   "sanitised": True}
    assert [row[2] for row in await rows_of(store, "bob")] == [f"mem_{i}" for i in range(5)]
    assert store.audit.trouble() is None
    assert store.audit.snapshot() == {"pending": 0, "failing": None, "set_aside": 0, "lost": 0}


async def test_an_event_the_store_refuses_on_its_own_is_set_aside_and_the_others_are_written(store: Store) -> None:
    await store.audit.record(event("bob", action="read", entry_id="mem_before"))
    await store.audit.record(event("mallory", details={"unwritable": object()}))  # no JSON for it
    await five_reads_by_bob(store)
    [(_, namespace, entry_id, details)] = await rows_of(store, "mallory")
    assert (namespace, entry_id, json.loads(details)) == (None, None, {"set_aside": "TypeError"})
    assert [row[2] for row in await rows_of(store, "bob")] == ["mem_before"] + [f"mem_{i}" for i in range(5)]
    assert store.audit.snapshot() == {"pending": 0, "failing": None, "set_aside": 1, "lost": 0}


async def test_an_oversized_field_never_holds_up_the_events_around_it(store: Store) -> None:
    # 9,000 random letters: past PostgreSQL's btree row limit for the agent index (refused there and
    # set aside), a plain long value for SQLite (written).
    huge = "".join(random.Random(7).choices(string.ascii_letters, k=9000))
    await store.audit.record(event(huge))
    await five_reads_by_bob(store)
    assert [row[2] for row in await rows_of(store, "bob")] == [f"mem_{i}" for i in range(5)]
    kept = await rows_of(store, huge)
    marker = await rows_of(store, huge[:128])
    assert len(kept) + len(marker) == 1
    assert store.audit.snapshot()["set_aside"] == len(marker)
    assert store.audit.trouble() is None
