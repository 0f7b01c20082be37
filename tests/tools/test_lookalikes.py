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

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from agent_memory.config import Settings
from agent_memory.core.model.ids import new_entry_id
from agent_memory.tools.server import create_server
from tests.conftest import IDENTITY_KEY, Agent, chosen_backends, identity, make_settings, scalar, store_settings
from tests.e2e.servers import agent_memory_command, server_env
from tests.tools.test_retrieve import semantic_until

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


# -- read lists: an entry whose read list leaves a caller out is, to that caller, not there ------

READERS = [("alice", "sys1", "red"), ("ALICE", "sys1", "red"), ("al_ce", "sys1", "red"), ("alice2", "sys1", "red"),
           ("alice", "sys1", "RED"), ("lead", "sys3", "red"), ("chief", "sys4", "red"), ("chief2", "sys4", "blue"),
           ("chief3", "sys4", "red"), ("boss", "sys5", "red")]


def _same(shown: object, real: str, fake: str) -> str:
    """`shown` as text with both ids (or keys) written alike."""
    return json.dumps(shown, sort_keys=True).replace(real, "<id>").replace(fake, "<id>")


async def _crud_error(caller: Agent, **arguments: object) -> dict:
    failed, data = await caller.crud(**arguments)
    assert not data["items"] and len(data["errors"]) == 1, data
    return data["errors"][0]


async def _resource_error(client: Client, entry_id: str, ident: dict) -> dict:
    with pytest.raises(MCPError) as hidden:
        await _read_resource(client, f"memory://entries/{entry_id}", ident)
    return {"code": hidden.value.error.code, "message": hidden.value.error.message, "data": hidden.value.error.data}


async def _looks_missing(client: Client, caller: Agent, entry: dict) -> None:
    """Every way to name `entry` by id answers `caller` exactly as it answers for an id never stored."""
    fake = new_entry_id()
    where = {"scope": entry["scope"], "namespace": entry["namespace"]}
    asks = [
        {"action": "read", **where, "items": [{"id": "{id}"}]},
        {"action": "update", **where, "items": [{"id": "{id}", "content": "overwritten", "if_match": entry["etag"]}]},
        {"action": "update", **where, "items": [{"id": "{id}", "read_agents": [caller.ident["agent_id"]],
                                                 "if_match": entry["etag"]}]},
        {"action": "delete", **where, "items": [{"id": "{id}"}]},
        {"action": "promote", **where, "items": [{"id": "{id}", "target_scope": "agent"}]},
    ]
    for ask in asks:
        shown = [await _crud_error(caller, **json.loads(json.dumps(ask).replace("{id}", entry_id)))
                 for entry_id in (entry["id"], fake)]
        # NOT_FOUND, or the same namespace-level FORBIDDEN (a sys1 may not write team memory at all)
        assert shown[0]["code"] in ("NOT_FOUND", "FORBIDDEN") and _same(shown[0], entry["id"], fake) == _same(
            shown[1], entry["id"], fake), (ask["action"], shown)
        assert ask["action"] != "read" or shown[0]["code"] == "NOT_FOUND"
    shown = [await _resource_error(client, entry_id, caller.ident) for entry_id in (entry["id"], fake)]
    assert _same(shown[0], entry["id"], fake) == _same(shown[1], entry["id"], fake), shown
    if entry["key"] is not None:
        fake_key = "no-such-key-" + fake[-8:]
        shown = [await _crud_error(caller, action="read", **where, filters={"key": key})
                 for key in (entry["key"], fake_key)]
        assert _same(shown[0], entry["key"], fake_key) == _same(shown[1], entry["key"], fake_key), shown


@pytest.mark.parametrize("store_backend", chosen_backends(), indirect=True)
async def test_a_read_list_hides_an_entry_from_lookalikes_exactly_like_a_missing_one(
        tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> None:
    settings = store_settings(request, tmp_path / "data", store_backend, vector_backend="chroma",
                              max_entries_per_namespace=100_000)
    async with Client(create_server(settings), mode="auto") as client:
        base = Agent(client)
        lead, chief = base.as_(identity("lead", "sys3", "red")), base.as_(identity("chief", "sys4", "red"))
        team = {"scope": "team", "layer": "long_term"}
        made = [
            await lead.create("walrus migration route", namespace="red", **team, item={"read_agents": ["alice"]}),
            await lead.create("walrus feeding schedule", namespace="red/ops", **team,
                              item={"read_agents": ["alice", "al_ce"], "key": "walrus-feeding"}),
            await chief.create("walrus treaty draft", scope="global", namespace="global", layer="long_term",
                               item={"read_agents": ["chief2"]}),
            await lead.create("walrus open notice", namespace="red", **team),
        ]
        for entry in made[3:]:
            assert entry["read_agents"] == []
        every = {e["id"] for e in made}
        with anyio.fail_after(60):  # every vector indexed, so meaning search sees all of them
            while scalar(settings, "SELECT COUNT(*) FROM vector_outbox"):
                await anyio.sleep(0.1)

        def may_read(entry: dict, agent_id: str, system_type: str, in_team: str) -> bool:
            by_scope = (in_team == "red") if entry["scope"] == "team" else system_type == "sys4"
            listed = not entry["read_agents"] or agent_id in (entry["owner_agent_id"], *entry["read_agents"])
            return by_scope and listed

        for agent_id, system_type, in_team in READERS:
            caller = base.as_(identity(agent_id, system_type, in_team))
            visible = {e["id"] for e in made if may_read(e, agent_id, system_type, in_team)}
            who = (agent_id, system_type, in_team)
            result = await client.call_tool("memory_retrieve", {"query": "walrus", "mode": "keyword", "limit": 50},
                                            meta={IDENTITY_KEY: caller.ident})
            assert {i["id"] for i in result.structured_content["items"]} == visible, who
            if visible:
                by_meaning = await semantic_until(caller, "walruses of the sea", min_score=0, limit=50)
                assert {i["id"] for i in by_meaning["items"]} == visible, who
                hybrid = await client.call_tool("memory_retrieve", {"query": "walrus", "limit": 50, "min_score": 0,
                                                                    "relative_floor": 0},
                                                meta={IDENTITY_KEY: caller.ident})
                assert hybrid.structured_content["degraded"] is None
                assert {i["id"] for i in hybrid.structured_content["items"]} == visible, who
            if in_team == "red":
                failed, data = await caller.crud(action="list", scope="team", namespace="red", subtree=True,
                                                 limit=100)
                assert {e["id"] for e in data["items"]} == visible - {made[2]["id"]}, who
            stats = await _read_resource(client, "memory://stats", caller.ident)
            assert stats["entries"] == len(visible), who
            for entry in made:
                if entry["id"] not in visible and (entry["scope"] == "global" or in_team == "red") \
                        and (entry["scope"] == "team" or system_type == "sys4"):
                    await _looks_missing(client, caller, entry)  # hidden by its read list alone
        assert every == {e["id"] for e in made}
