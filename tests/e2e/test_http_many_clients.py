"""Many agents at once: 8 concurrent HTTP clients of different identities in two teams, and a
stdio process writing to the same data directory as an HTTP process."""

from __future__ import annotations

import random
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import agent_memory_command, http_client, http_server, server_env, token

pytestmark = pytest.mark.anyio

AGENTS = [(f"agent-{i}", "sys3" if i % 2 else "sys1", "red" if i < 4 else "blue") for i in range(8)]


async def test_eight_concurrent_clients_keep_every_write_and_see_only_their_team(tmp_path: Path) -> None:
    acknowledged: dict[str, str] = {}  # entry id -> content, as acknowledged by the server
    deleted: set[str] = set()
    seen_teams: dict[str, set[str]] = {}
    errors: list[dict] = []

    async def work(url: str, agent_id: str, system_type: str, team: str) -> None:
        rng = random.Random(agent_id)
        mine: dict[str, dict] = {}
        async with http_client(url, token(agent_id, system_type, team)) as client:
            for step in range(30):
                scope = "team" if system_type == "sys3" and step % 3 == 0 else "agent"
                where = {"scope": scope, "namespace": team} if scope == "team" else {}
                content = f"{agent_id} note {step}"
                result = await client.call_tool("memory_crud", {"action": "create", "layer": "working", **where,
                                                                "items": [{"content": content}]})
                if result.is_error:
                    errors.extend(result.structured_content["errors"])
                    continue
                entry = result.structured_content["items"][0]
                acknowledged[entry["id"]] = content
                mine[entry["id"]] = {**entry, "where": where}
                if step % 4 == 1:
                    target = mine[rng.choice(list(mine))]
                    new = f"{target['content']} (edited)"
                    updated = await client.call_tool("memory_crud", {
                        "action": "update", **target["where"], "if_match": target["etag"],
                        "items": [{"id": target["id"], "content": new}]})
                    if updated.is_error:
                        errors.extend(updated.structured_content["errors"])
                    else:
                        mine[target["id"]] = {**updated.structured_content["items"][0], "where": target["where"]}
                        acknowledged[target["id"]] = new
                if step % 7 == 6:
                    victim = mine.pop(rng.choice(list(mine)))
                    removed = await client.call_tool("memory_crud", {"action": "delete", **victim["where"],
                                                                     "items": [{"id": victim["id"]}]})
                    assert not removed.is_error, removed.structured_content
                    deleted.add(victim["id"])
                for list_args in ({"action": "list", "limit": 100},
                                  {"action": "list", "scope": "team", "namespace": team, "limit": 100}):
                    listed = await client.call_tool("memory_crud", list_args)
                    assert not listed.is_error, listed.structured_content
                    seen_teams.setdefault(agent_id, set()).update(e["team"] for e in listed.structured_content["items"])

    with http_server(tmp_path / "data", MEMORY_RATE_LIMIT_PER_SECOND="0") as url:
        async with anyio.create_task_group() as tg:
            for agent_id, system_type, team in AGENTS:
                tg.start_soon(work, url, agent_id, system_type, team)

        assert errors == [], errors  # no locking errors, no conflicts: each agent edits its own entries
        for agent_id, _, team in AGENTS:
            assert seen_teams[agent_id] == {team}
        stored: dict[str, str] = {}
        for agent_id, system_type, team in AGENTS:
            async with http_client(url, token(agent_id, system_type, team)) as client:
                for args in ({"action": "list", "limit": 100},
                             {"action": "list", "scope": "team", "namespace": team, "limit": 100}):
                    page = await client.call_tool("memory_crud", args)
                    for entry in page.structured_content["items"]:
                        assert entry["id"] not in stored or stored[entry["id"]] == entry["content"]
                        stored[entry["id"]] = entry["content"]
                    assert page.structured_content["has_more"] is False
    expected = {entry_id: content for entry_id, content in acknowledged.items() if entry_id not in deleted}
    assert stored == expected
    assert len(expected) == 8 * 30 - len(deleted)


async def test_stdio_and_http_processes_share_one_store_without_losing_writes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    stdio = StdioServerParameters(command=agent_memory_command(), args=["serve"],
                                  env=server_env(data, MEMORY_AGENT_ID="shared", MEMORY_SYSTEM_TYPE="sys3",
                                                 MEMORY_TEAM="red", MEMORY_RATE_LIMIT_PER_SECOND="0"))
    with http_server(data, MEMORY_RATE_LIMIT_PER_SECOND="0") as url:
        async with Client(stdio, mode="legacy", read_timeout_seconds=30) as local, \
                http_client(url, token("shared", "sys3", "red")) as remote:
            seed = await local.call_tool("memory_crud", {"action": "create", "scope": "team", "namespace": "red",
                                                         "layer": "long_term", "items": [{"content": "counter"}]})
            counter = seed.structured_content["items"][0]["id"]
            created: dict[str, list[str]] = {"stdio": [], "http": []}
            versions: dict[str, list[int]] = {"stdio": [], "http": []}

            async def writer(name: str, client: Client) -> None:
                for i in range(40):
                    made = await client.call_tool("memory_crud", {
                        "action": "create", "items": [{"content": f"{name} {i}"}, {"content": f"{name} {i}b"}]})
                    assert not made.is_error, made.structured_content
                    created[name].extend(e["id"] for e in made.structured_content["items"])
                    bumped = await client.call_tool("memory_crud", {
                        "action": "update", "scope": "team", "namespace": "red",
                        "items": [{"id": counter, "content": f"{name} {i}"}]})
                    assert not bumped.is_error, bumped.structured_content
                    versions[name].append(bumped.structured_content["items"][0]["version"])

            async with anyio.create_task_group() as tg:
                tg.start_soon(writer, "stdio", local)
                tg.start_soon(writer, "http", remote)

            for name in versions:  # versions seen by one writer never go backwards
                assert versions[name] == sorted(versions[name]) and len(set(versions[name])) == 40
            assert sorted(versions["stdio"] + versions["http"]) == list(range(2, 82))
            for client in (local, remote):
                ids: list[str] = []
                cursor = None
                while True:
                    page = await client.call_tool("memory_crud", {"action": "list", "limit": 50,
                                                                  **({"cursor": cursor} if cursor else {})})
                    ids += [e["id"] for e in page.structured_content["items"]]
                    cursor = page.structured_content["next_cursor"]
                    if cursor is None:
                        break
                assert sorted(ids) == sorted(created["stdio"] + created["http"])
                final = await client.call_tool("memory_crud", {"action": "read", "scope": "team", "namespace": "red",
                                                               "items": [{"id": counter}]})
                assert final.structured_content["items"][0]["version"] == 81
