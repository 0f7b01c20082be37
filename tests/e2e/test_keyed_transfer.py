"""Keys travel with `agent-memory export` and `import`; an imported entry whose key is already held
in its place (by another entry) is refused with the holder named, never stored as a second one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from agent_memory.tools.server import create_server
from tests.conftest import Agent, make_settings
from tests.e2e.test_operator_cli import offline_env, run

pytestmark = pytest.mark.anyio


async def test_keys_are_exported_and_imported_and_a_key_held_by_another_entry_is_refused(tmp_path: Path) -> None:
    async with Client(create_server(make_settings(tmp_path / "a"))) as client:
        agent = Agent(client)
        keyed = await agent.create("v1", item={"key": "profile"})
        await agent.create("v2", item={"key": "profile"})
        await agent.create("unkeyed")
    exported = run(offline_env(tmp_path / "a"), "export")
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    assert sorted((r["content"], r["key"], r["version"]) for r in records) == [("unkeyed", None, 1),
                                                                                ("v2", "profile", 2)]
    target = offline_env(tmp_path / "b")
    moved = run(target, "import", stdin=exported.stdout)
    assert moved.returncode == 0, moved.stderr
    assert run(target, "export").stdout == exported.stdout

    other = next(r for r in records if r["key"] == "profile")
    clash = json.dumps({**other, "id": other["id"][:-4] + "zzzz", "content": "a second holder"})
    refused = run(target, "import", stdin=clash + "\n")
    assert refused.returncode == 1 and f"key 'profile' is already held by entry {keyed['id']}" in refused.stderr
    assert run(target, "export").stdout == exported.stdout
