"""Items the LangGraph store wrote before entries had keys (the key only as a tag, racing puts having
left duplicates) are keyed at start: the newest copy, the one `get` read, takes the key; the older
copies stay unkeyed, are no longer items, and go with a delete of the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_memory.config import Settings
from agent_memory.integrations.langgraph import AgentMemoryStore
from agent_memory.integrations.mcp_link import MemoryLink
from agent_memory.tools.server import create_server
from tests.conftest import store_settings
from tests.integrations.conftest import ALICE

UNDO_KEYS = ("DROP INDEX entries_by_key", "ALTER TABLE entries DROP COLUMN key",
             "DELETE FROM schema_migrations WHERE name IN ('015_entry_keys', '012_entry_keys', '019_key_slots', "
             "'016_key_slots')")


@pytest.fixture(params=["sqlite", "postgres"])
def store_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def run_sql(settings: Settings, statements: list[tuple[str, tuple[object, ...]]]) -> None:
    if settings.backend == "postgres":
        import psycopg

        with psycopg.connect(settings.postgres_url) as pg:
            for sql, params in statements:
                pg.execute(sql.replace("?", "%s"), params)
        return
    import sqlite3

    with sqlite3.connect(settings.sqlite_file) as db:
        for sql, params in statements:
            db.execute(sql, params)


def test_legacy_duplicates_of_a_langgraph_key_read_as_their_newest_copy_and_are_updated_in_place(
        tmp_path: Path, request: pytest.FixtureRequest, store_backend: str) -> None:
    settings = store_settings(request, tmp_path / "data", store_backend)
    link = MemoryLink.in_process(create_server(settings), ALICE)
    store = AgentMemoryStore(link)
    scope, namespace = store.area(("profile", "dana"))
    tags = store._tags(scope, namespace, "summary")
    made = link.call_sync("memory_crud", {"action": "create", "scope": scope, "namespace": namespace,
                                          "items": [{"content": f'{{"v":{n}}}', "tags": tags} for n in range(3)]})
    link.close_sync()
    ids = [e["id"] for e in made["items"]]
    run_sql(settings, [("UPDATE entries SET created_at = ? WHERE id = ?", (f"2025-01-0{n + 1}T00:00:00.000Z", i))
                       for n, i in enumerate(ids)] + [(sql, ()) for sql in UNDO_KEYS])

    link = MemoryLink.in_process(create_server(settings), ALICE)
    store = AgentMemoryStore(link)
    try:
        assert store.get(("profile", "dana"), "summary").value == {"v": 2}  # type: ignore[union-attr]
        assert [i.value for i in store.search(("profile", "dana"))] == [{"v": 2}]
        store.put(("profile", "dana"), "summary", {"v": 3})
        listed = link.call_sync("memory_crud", {"action": "list", "scope": scope, "namespace": namespace})["items"]
        assert sorted((e["id"], e["key"], e["version"]) for e in listed) == sorted(
            [(ids[0], None, 1), (ids[1], None, 1), (ids[2], "summary", 2)])
        assert [i.value for i in store.search(("profile", "dana"))] == [{"v": 3}]
        store.delete(("profile", "dana"), "summary")
        assert link.call_sync("memory_crud", {"action": "list", "scope": scope, "namespace": namespace})["items"] == []
    finally:
        link.close_sync()
