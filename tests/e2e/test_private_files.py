"""A real server under a permissive umask keeps every file of its store private to its user (the
memories are in them), and says so when it opens a store that other users can read."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.servers import agent_memory_command, server_env

pytestmark = pytest.mark.anyio


def serve_with_umask(umask: str, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command="/bin/sh", args=["-c", f'umask {umask} && exec "$0" serve',
                                                          agent_memory_command()], env=env)


async def backlog(client: Client) -> int:
    stats = json.loads((await client.read_resource("memory://stats")).contents[0].text)
    return int(stats["vector_outbox_backlog"])


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def logged(path: Path, event: str) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == event]


@pytest.mark.parametrize("umask", ["022", "000"])
async def test_a_new_store_is_private_to_its_user_whatever_the_umask(tmp_path: Path, umask: str) -> None:
    data = tmp_path / "data"
    env = server_env(data, MEMORY_RATE_LIMIT_PER_SECOND="0")
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(serve_with_umask(umask, env), errlog=errlog), mode="legacy",
                          read_timeout_seconds=60) as client:
            made = await client.call_tool("memory_crud", {"action": "create", "items": [
                {"content": "The spare key is under the third flower pot."}]})
            assert not made.is_error, made.structured_content
            with anyio.fail_after(60):  # indexed: Chroma has made its files for the collection
                while await backlog(client):
                    await anyio.sleep(0.1)
            # While the server runs, SQLite's -wal and -shm files exist beside the database.
            files = [data / "memory.db", data / "memory.db-wal", data / "memory.db-shm",
                     data / "chroma" / "chroma.sqlite3"]
            assert {str(p): oct(mode(p)) for p in files} == {str(p): "0o600" for p in files}
            dirs = [data, data / "chroma", data / "logs"]
            assert {str(p): oct(mode(p)) for p in dirs} == {str(p): "0o700" for p in dirs}
            index = [p for p in (data / "chroma").rglob("*") if p.parent != data / "chroma" or p.is_dir()]
            assert index, "Chroma made no directory for the collection"
            assert {str(p): oct(mode(p)) for p in index} == {
                str(p): "0o700" if p.is_dir() else "0o600" for p in index}
    assert logged(tmp_path / "stderr.log", "store_readable_by_others") == []


async def test_opening_a_store_others_can_read_warns_once_and_changes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = server_env(data, MEMORY_RATE_LIMIT_PER_SECOND="0", MEMORY_VECTOR_BACKEND="none")
    async with Client(serve_with_umask("022", env), mode="legacy", read_timeout_seconds=60) as client:
        made = await client.call_tool("memory_crud", {"action": "create", "items": [{"content": "kept"}]})
        assert not made.is_error
    (data / "memory.db").chmod(0o644)  # as an older version left it
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(serve_with_umask("022", env), errlog=errlog), mode="legacy",
                          read_timeout_seconds=60) as client:
            listed = await client.call_tool("memory_crud", {"action": "list"})
            assert [i["content"] for i in listed.structured_content["items"]] == ["kept"]
    warnings = logged(tmp_path / "stderr.log", "store_readable_by_others")
    assert len(warnings) == 1 and warnings[0]["level"] == "warning"
    assert warnings[0]["paths"] == [f"{data / 'memory.db'} (-rw-r--r--)"]
    assert mode(data / "memory.db") == 0o644 and mode(data) == 0o700  # the owner's choice stays
