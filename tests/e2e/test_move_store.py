"""Moving a store between SQLite and PostgreSQL with `agent-memory export` and `import`: lossless
both ways (every field of every entry, the same JSON lines back), each imported entry audited
and queued for the vector index, and the moved memories readable through a server on the new store;
an older store holding text no store should hold still exports, and its move names those entries."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from agent_memory.bootstrap import open_records
from agent_memory.core.model.models import Entry, Scope
from tests.conftest import make_settings
from tests.e2e.servers import agent_memory_command
from tests.e2e.test_operator_cli import _fill, offline_env, run
from tests.storage.stores import stored

pytestmark = pytest.mark.anyio


def on_postgres(data: Path, url: str) -> dict[str, str]:
    return offline_env(data, MEMORY_BACKEND="postgres", MEMORY_POSTGRES_URL=url)


async def test_sqlite_to_postgres_and_back_is_lossless(tmp_path: Path, postgres_url: str) -> None:
    sqlite = offline_env(tmp_path / "sqlite")
    await _fill(sqlite)
    exported = run(sqlite, "export")
    assert exported.returncode == 0, exported.stderr
    lines = exported.stdout.splitlines()
    assert len(lines) == 12
    kinds = {(r["scope"], r["layer"], r["conflict"], r["compacted"], r["superseded_by"] is not None)
             for r in map(json.loads, lines)}
    assert len(kinds) >= 5  # scopes, layers, a conflict, compacted turns, a superseded fact

    postgres = on_postgres(tmp_path / "pg", postgres_url)
    moved = run(postgres, "import", stdin=exported.stdout)
    assert moved.returncode == 0, moved.stderr
    assert "12 entries imported" in moved.stderr
    assert run(postgres, "export").stdout == exported.stdout  # every field, in storage order

    stats = json.loads(run(postgres, "stats").stdout)
    assert stats["entries"] == 12 and stats["vector_outbox_backlog"] == 12  # queued for pgvector
    audit = [json.loads(line) for line in run(postgres, "audit", "--action", "import").stdout.splitlines()]
    assert len(audit) == 12 and {row["tool"] for row in audit} == {"import"}
    again = run(postgres, "import", stdin=exported.stdout)  # ids already there: nothing changes
    assert again.returncode == 1 and "already stored" in again.stderr
    assert run(postgres, "export").stdout == exported.stdout

    back = offline_env(tmp_path / "sqlite-again")
    returned = run(back, "import", stdin=run(postgres, "export").stdout)
    assert returned.returncode == 0, returned.stderr
    assert run(back, "export").stdout == exported.stdout


async def test_moved_memories_are_served_from_postgres(tmp_path: Path, postgres_url: str) -> None:
    sqlite = offline_env(tmp_path / "sqlite")
    await _fill(sqlite)
    postgres = on_postgres(tmp_path / "pg", postgres_url)
    assert run(postgres, "import", stdin=run(sqlite, "export").stdout).returncode == 0
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=postgres)
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        found = (await client.call_tool("memory_retrieve", {"query": "Zürich office café", "mode": "keyword"}))
        assert not found.is_error, found.structured_content
        assert any("Zürich" in item["content"] for item in found.structured_content["items"])
        listed = (await client.call_tool("memory_crud", {"action": "list", "scope": "team", "namespace": "ops"}))
        assert [i["content"] for i in listed.structured_content["items"]] == ["Page the on-call only for errors."]


async def plant(data: Path, *entries: Entry) -> None:
    """Store `entries` as they are, as an older server that took any text could have."""
    async with open_records(make_settings(data)) as records:
        await records.repo.transact(lambda tx: [tx.insert(entry) for entry in entries])


async def test_an_older_store_holding_nul_and_lone_surrogates_exports_and_moves_naming_what_it_cannot_carry(
        tmp_path: Path, postgres_url: str) -> None:
    sqlite = offline_env(tmp_path / "sqlite")
    await _fill(sqlite)
    older = stored(Scope.AGENT, "launcher", owner="launcher", team="ops", content="kept from an older server")
    await plant(tmp_path / "sqlite", replace(older, content="before\x00after"),
                replace(older, id="mem_surrogate_tag", tags=("\ud800",)))
    exported = run(sqlite, "export")
    assert exported.returncode == 0 and "export: 14 entries" in exported.stderr, exported.stderr
    lines = exported.stdout.splitlines()
    assert "before\\u0000after" in lines[12] and '"tags": ["\\ud800"]' in lines[13]  # written as JSON escapes
    good = "".join(line + "\n" for line in lines[:12])

    postgres = on_postgres(tmp_path / "pg", postgres_url)
    strict = run(postgres, "import", stdin=exported.stdout)
    assert strict.returncode == 1 and "Traceback" not in strict.stderr
    assert "import: line 13: content holds a NUL character (U+0000)" in strict.stderr
    assert "import: line 14: tags[0] holds a lone surrogate" in strict.stderr
    assert "import: 2 bad lines; nothing imported (use --skip-bad to import the others)" in strict.stderr
    assert run(postgres, "export").stdout == ""

    moved = run(postgres, "import", "--skip-bad", stdin=exported.stdout)
    assert moved.returncode == 1 and "import: done, 12 entries imported, 2 bad lines skipped" in moved.stderr
    assert run(postgres, "export").stdout == good  # the rest carried, every field
    back = offline_env(tmp_path / "sqlite-again")
    assert run(back, "import", stdin=run(postgres, "export").stdout).returncode == 0
    assert run(back, "export").stdout == good
