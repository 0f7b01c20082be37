"""Look-alike teams and agents never reach each other's memory.

Teams `red`, `RED`, `Red`, `r_d`, `redteam` and agents `alice`, `ALICE`, `al_ce`, `alice2` (and
`alice` again in team `RED`) write memory about walruses; every tool, resource and operator command
must keep them apart: namespaces match case-exactly, `_` is a plain character, and `red` does not
reach `redteam` or `red_x`. (SQLite's LIKE folds ASCII case, which once let `red` reach `RED/ops`.)
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from agent_memory.config import Settings
from agent_memory.tools.server import create_server
from tests.conftest import IDENTITY_KEY, Agent, identity, make_settings
from tests.e2e.servers import agent_memory_command, server_env

pytestmark = pytest.mark.anyio

TEAMS = ["red", "RED", "Red", "r_d", "redteam"]
AGENTS = [("alice", "red"), ("ALICE", "red"), ("al_ce", "red"), ("alice2", "red"), ("alice", "RED")]
CROWD = 120  # entries team RED writes about walruses, to crowd red's one out if partitions leak


@pytest.fixture
def lookalike_settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "data", max_entries_per_namespace=100_000)


async def _fill(client: Client) -> dict[str, dict[str, set[str]]]:
    """Every caller's own entries: {caller key: {"team": ids, "agent": ids}}."""
    own: dict[str, dict[str, set[str]]] = {}
    for team in TEAMS:
        writer = Agent(client, identity(f"lead-{team}", "sys3", team))
        ids = own.setdefault(f"team:{team}", {"team": set(), "agent": set()})["team"]
        for namespace in (team, f"{team}/ops"):
            ids.add((await writer.create(f"walrus sighting logged by team {team} in {namespace}", scope="team",
                                         namespace=namespace, layer="long_term"))["id"])
    big = Agent(client, identity("lead-RED", "sys3", "RED"))
    for start in range(0, CROWD, 10):
        failed, data = await big.crud(action="create", scope="team", namespace="RED/ops", layer="long_term",
                                      items=[{"content": f"walrus census {n}"} for n in range(start, start + 10)])
        assert not failed
        own["team:RED"]["team"].update(e["id"] for e in data["items"])
    for agent_id, team in AGENTS:
        me = Agent(client, identity(agent_id, "sys1", team))
        ids = own.setdefault(f"agent:{agent_id}@{team}", {"team": set(), "agent": set()})["agent"]
        for namespace in (agent_id, f"{agent_id}/notes"):
            ids.add((await me.create(f"walrus diary of {agent_id} in {team}, kept in {namespace}",
                                     namespace=namespace))["id"])
        logged = await me.log("s1", f"I ({agent_id} of {team}) prefer walrus stories.")
        own[f"agent:{agent_id}@{team}"]["session"] = {e["id"] for e in logged["items"]}
    return own


def _owner_key(entry: dict) -> str:
    if entry["scope"] == "team":
        return f"team:{entry['namespace'].split('/')[0]}"
    return f"agent:{entry['owner_agent_id']}@{entry['team']}"


async def _read_resource(client: Client, uri: str, ident: dict) -> dict:
    result = await client.read_resource(uri, meta={IDENTITY_KEY: ident})
    return json.loads(result.contents[0].text)


async def test_lookalike_teams_and_agents_stay_apart_in_every_tool_and_resource(
        lookalike_settings: Settings) -> None:
    async with Client(create_server(lookalike_settings), mode="auto") as client:
        own = await _fill(client)
        every_id = {i for sets in own.values() for ids in sets.values() for i in ids}
        for team in TEAMS:
            reader = Agent(client, identity(f"reader-{team}", "sys1", team))
            result = await client.call_tool("memory_retrieve", {"query": "walrus", "mode": "keyword", "limit": 50},
                                            meta={IDENTITY_KEY: reader.ident})
            found = result.structured_content["items"]
            assert {i["id"] for i in found} <= own[f"team:{team}"]["team"], team
            if team != "RED":  # RED's crowd fills its own 50; everyone else finds exactly its own
                assert {i["id"] for i in found} == own[f"team:{team}"]["team"], team
            for namespace in (team, f"{team}/ops"):
                failed, data = await reader.crud(action="list", scope="team", namespace=namespace, limit=100)
                assert not failed and {_owner_key(e) for e in data["items"]} == {f"team:{team}"}
            stats = await _read_resource(client, "memory://stats", reader.ident)
            shown = {(n["scope"], n["namespace"]) for n in stats["namespaces"]}
            assert shown == {("team", team), ("team", f"{team}/ops")}
            assert stats["entries"] == len(own[f"team:{team}"]["team"])
            for other in every_id - own[f"team:{team}"]["team"]:
                with pytest.raises(MCPError) as hidden:
                    await _read_resource(client, f"memory://entries/{other}", reader.ident)
                assert hidden.value.error.data["code"] == "NOT_FOUND"
        for agent_id, team in AGENTS:
            me = Agent(client, identity(agent_id, "sys1", team))
            mine = own[f"agent:{agent_id}@{team}"]["agent"]
            result = await client.call_tool("memory_retrieve", {"query": "walrus diary", "scopes": ["agent"],
                                                                "mode": "keyword", "limit": 50},
                                            meta={IDENTITY_KEY: me.ident})
            found = result.structured_content["items"]
            assert {i["id"] for i in found} == mine | own[f"agent:{agent_id}@{team}"]["session"], (agent_id, team)
            for namespace in (agent_id, f"{agent_id}/notes"):
                failed, data = await me.crud(action="list", namespace=namespace, limit=100)
                assert {_owner_key(e) for e in data["items"]} == {f"agent:{agent_id}@{team}"}
            failed, data = await me.crud(action="list", filters={"session_id": "s1"})
            assert [e["content"] for e in data["items"]] == [f"I ({agent_id} of {team}) prefer walrus stories."]
            # The same fact for everyone: with a leak it would reinforce a look-alike's copy instead.
            failed, reflected = await me.reflect(action="reflect", session_id="s1",
                                                 facts=["The user likes walrus stories."])
            assert not failed and len(reflected["items"]) == 1, reflected
            fact = reflected["items"][0]
            assert (fact["namespace"], fact["owner_agent_id"], fact["team"], fact["version"]) == (
                agent_id, agent_id, team, 1)
            stats = await _read_resource(client, "memory://stats", me.ident)
            assert {(n["scope"], n["namespace"]) for n in stats["namespaces"]} <= {
                ("agent", agent_id), ("agent", f"{agent_id}/notes"), ("team", team), ("team", f"{team}/ops")}
            assert stats["by_scope"]["agent"] == len(mine) + 1 + len(reflected["items"])  # + its session turn


def _cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = server_env(Path(settings.data_dir), MEMORY_VECTOR_BACKEND="none")
    return subprocess.run([agent_memory_command(), *args], env=env, capture_output=True, text=True, timeout=120,
                          check=False)


async def test_lookalike_namespaces_stay_apart_in_operator_commands(lookalike_settings: Settings) -> None:
    async with Client(create_server(lookalike_settings), mode="auto") as client:
        own = await _fill(client)
    exported = _cli(lookalike_settings, "export", "--scope", "team", "--namespace", "red", "--cascade")
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert {e["namespace"] for e in lines} == {"red", "red/ops"}
    assert {e["id"] for e in lines} == own["team:red"]["team"]
    for namespace, scope in (("red", "team"), ("alice", "agent"), ("r_d", "team")):
        plan = _cli(lookalike_settings, "erase", "--scope", scope, "--namespace", namespace, "--cascade", "--dry-run")
        assert plan.returncode == 0, plan.stderr
        namespaces = {line.split()[2] for line in plan.stdout.splitlines() if line.strip()}
        assert namespaces == {namespace, f"{namespace}/{'ops' if scope == 'team' else 'notes'}"}, plan.stdout
    stats = json.loads(_cli(lookalike_settings, "stats").stdout)
    counts = {(n["scope"], n["namespace"]): n["entries"] for n in stats["namespaces"]}
    assert counts[("team", "RED/ops")] == CROWD + 1 and counts[("team", "red/ops")] == 1
    erased = _cli(lookalike_settings, "erase", "--scope", "team", "--namespace", "red", "--cascade", "--yes")
    assert erased.returncode == 0, erased.stderr
    stats = json.loads(_cli(lookalike_settings, "stats").stdout)
    left = {(n["scope"], n["namespace"]) for n in stats["namespaces"]}
    assert ("team", "red") not in left and ("team", "red/ops") not in left
    assert {("team", t) for t in TEAMS if t != "red"} <= left and ("team", "RED/ops") in left
