"""An older SQLite store holding a tag with a lone surrogate (imports before the text rule could
leave one; JSON keeps it as an escape) is repaired at start by migration 014: the tag is kept as
escaped text, so every answer, export and move can carry it. Surrogate pairs (emoji) are left alone."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from mcp import Client

from agent_memory.tools.server import create_server
from tests.conftest import Agent, make_settings

pytestmark = pytest.mark.anyio


async def test_sqlite_tags_with_a_lone_surrogate_are_escaped_at_start_and_answered_over_mcp(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data")
    async with Client(create_server(settings)) as client:
        broken = await Agent(client).create("an entry imported long ago")
        fine = await Agent(client).create("an entry with an emoji tag")
    with sqlite3.connect(settings.sqlite_file) as db:
        db.execute("UPDATE entries SET tags = ? WHERE id = ?", (json.dumps(["ok", "bad \ud800 half"]), broken["id"]))
        db.execute("UPDATE entries SET tags = ? WHERE id = ?", (json.dumps(["party \U0001f389"]), fine["id"]))
        db.execute("DELETE FROM schema_migrations WHERE name = '014_storable_tags'")  # as before the repair
    async with Client(create_server(settings)) as client:
        _, listed = await Agent(client).crud(action="list")
    tags = {entry["id"]: entry["tags"] for entry in listed["items"]}
    assert tags == {broken["id"]: ["ok", "bad \\ud800 half"], fine["id"]: ["party \U0001f389"]}
