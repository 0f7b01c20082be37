"""An audit log that cannot be written is said, not hidden: in `degraded`, in `memory://stats`
and in the log, while its events wait; once the store takes them again, none is lost."""

from __future__ import annotations

import json
import sqlite3
import time

import anyio
import pytest
from mcp import Client

from agent_memory.config import Settings
from tests.conftest import Agent, audit_rows

pytestmark = pytest.mark.anyio


def rename_audit(settings: Settings, old: str, new: str) -> None:
    sql = f"ALTER TABLE {old} RENAME TO {new}"
    if settings.backend == "postgres":
        import psycopg

        with psycopg.connect(settings.postgres_url, autocommit=True) as pg:
            pg.execute(sql)
        return
    conn = sqlite3.connect(settings.sqlite_file, timeout=30)
    try:
        conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


async def audit_state(client: Client) -> dict:
    read = await client.read_resource("memory://stats")
    return json.loads(read.contents[0].text)["audit"]


async def test_an_audit_log_that_cannot_be_written_is_said_in_degraded_and_stats_and_nothing_is_lost(
        settings: Settings, client: Client) -> None:
    agent = Agent(client)
    await agent.create("the deploy key rotates every Monday")
    retrieves = 0

    async def retrieve() -> dict:
        nonlocal retrieves
        result = await client.call_tool("memory_retrieve", {"query": "deploy key", "mode": "keyword"})
        assert not result.is_error, result.structured_content
        assert len(result.structured_content["items"]) == 1
        retrieves += 1
        return result.structured_content

    assert (await retrieve())["degraded"] is None
    rename_audit(settings, "audit", "audit_away")
    try:
        deadline = time.monotonic() + 20
        while "the audit log cannot be written now" not in ((await retrieve())["degraded"] or ""):
            assert time.monotonic() < deadline, "degraded never said the audit log is failing"
            await anyio.sleep(0.05)
        state = await audit_state(client)
        assert state["failing"] is not None and state["pending"] >= 1 and state["lost"] == 0
    finally:
        rename_audit(settings, "audit_away", "audit")
    deadline = time.monotonic() + 20
    while (state := await audit_state(client))["pending"] or state["failing"]:
        assert time.monotonic() < deadline, f"the queued audit events were never written: {state}"
        await anyio.sleep(0.1)
    assert (await retrieve())["degraded"] is None
    assert state == {"pending": 0, "failing": None, "set_aside": 0, "lost": 0}
    rows = [row for row in audit_rows(settings) if row["action"] == "memory_retrieval"]
    assert len(rows) >= retrieves - 1  # the last retrieve's row may still be queued
