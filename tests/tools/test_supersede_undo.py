"""A supersede never hides anything for good (issue 23 item 2), through a real MCP client session on
SQLite and PostgreSQL: retrieved facts say which facts they replaced (`supersedes`), the chain shows
with `include_superseded`, and the owner (or a team writer, or an operator) can undo a supersede with
`memory_crud unsupersede` (version + 1, new etag, `if_match` honoured, audited with both ids); anyone
else gets exactly what a missing entry gets."""

from __future__ import annotations

import sqlite3

import pytest
from mcp import Client

from agent_memory.config import Settings
from agent_memory.contracts.retrieve import MemoryRetrieveResult
from agent_memory.tools.server import create_server
from tests.conftest import Agent, audit_rows, identity

pytestmark = pytest.mark.anyio  # on both stores: tests/conftest.py BOTH_STORES

MISSING = "mem_01ZZZZZZZZZZZZZZZZZZZZZZZZ"


async def _fact(agent: Agent, session_id: str, text: str) -> dict:
    failed, data = await agent.reflect(action="reflect", session_id=session_id, facts=[text], use_sampling=False)
    assert not failed, data
    return data


async def _chain(agent: Agent) -> tuple[dict, dict]:
    """A fact and the later fact that changed it: (old as stored now, new)."""
    old = (await _fact(agent, "a", "The API server listens on port 8080."))["items"][0]
    changed = await _fact(agent, "b", "The API server listens on port 8081.")
    assert changed["superseded_ids"] == [old["id"]], changed
    failed, read = await agent.crud(action="read", items=[{"id": old["id"]}])
    assert not failed
    return read["items"][0], changed["items"][0]


async def _retrieve(agent: Agent, **arguments: object) -> dict:
    failed, data = await agent.call("memory_retrieve", MemoryRetrieveResult,
                                    {"query": "API server port", "mode": "keyword", **arguments})
    assert not failed, data
    return data


def _execute(settings: Settings, sql: str) -> None:
    """Change the store underneath the server (a chain an import could have written), on either store."""
    if settings.backend == "postgres":
        import psycopg

        with psycopg.connect(settings.postgres_url, autocommit=True) as pg:
            pg.execute(sql)
        return
    conn = sqlite3.connect(settings.sqlite_file)
    try:
        conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


async def test_retrieved_facts_name_the_facts_they_replaced_and_the_chain_shows_on_request(agent: Agent) -> None:
    first, second = await _chain(agent)
    changed = await _fact(agent, "c", "The API server listens on port 8082.")
    third = changed["items"][0]
    assert changed["superseded_ids"] == [second["id"]]
    current = await _retrieve(agent)
    assert [i["id"] for i in current["items"]] == [third["id"]]
    [item] = current["items"]
    assert item["superseded_by"] is None
    assert item["supersedes"] == [{"id": second["id"], "created_at": second["created_at"]}]
    chain = {i["id"]: i for i in (await _retrieve(agent, include_superseded=True))["items"]}
    assert set(chain) == {first["id"], second["id"], third["id"]}
    assert chain[third["id"]]["supersedes"] == [{"id": second["id"], "created_at": second["created_at"]}]
    assert chain[second["id"]]["superseded_by"] == third["id"]
    assert chain[second["id"]]["supersedes"] == [{"id": first["id"], "created_at": first["created_at"]}]
    assert chain[first["id"]]["superseded_by"] == second["id"] and chain[first["id"]]["supersedes"] == []


async def test_another_agent_never_learns_what_a_fact_replaced(agent: Agent, settings: Settings) -> None:
    """`supersedes` names only facts the caller may read: a team fact that replaced someone's private
    fact (an imported chain) does not show that fact to the team."""
    lead = agent.as_(identity("lead", "sys3", "red"))
    team_fact = await lead.create("The API server port is 8081 for the team", scope="team", namespace="red",
                                  layer="long_term")
    private = await agent.create("The API server port is 8080 for alice")
    _execute(settings, f"UPDATE entries SET superseded_by = '{team_fact['id']}' WHERE id = '{private['id']}'")
    member = agent.as_(identity("member", "sys1", "red"))
    [seen] = (await _retrieve(member))["items"]
    assert seen["id"] == team_fact["id"] and seen["supersedes"] == []
    mine = {i["id"]: i for i in (await _retrieve(agent))["items"]}
    assert mine[team_fact["id"]]["supersedes"] == [{"id": private["id"], "created_at": private["created_at"]}]


async def test_the_owner_undoes_a_supersede_and_both_facts_are_current(agent: Agent, settings: Settings) -> None:
    old, new = await _chain(agent)
    assert old["superseded_by"] == new["id"]
    failed, data = await agent.crud(action="unsupersede", items=[{"id": old["id"], "if_match": old["etag"]}])
    assert not failed and data["errors"] == [], data
    [restored] = data["items"]
    assert restored["id"] == old["id"] and restored["superseded_by"] is None
    assert restored["version"] == old["version"] + 1 and restored["etag"] != old["etag"]
    assert restored["updated_at"] > old["updated_at"] and restored["content"] == old["content"]
    failed, read = await agent.crud(action="read", filters={"ids": [old["id"], new["id"]]})
    assert not failed and [e["superseded_by"] for e in read["items"]] == [None, None]
    assert read["items"][1]["version"] == new["version"]  # the newer fact is left as it was
    found = {i["id"]: i for i in (await _retrieve(agent))["items"]}
    assert set(found) == {old["id"], new["id"]}
    assert found[new["id"]]["supersedes"] == []  # it no longer replaces anything
    [row] = [r for r in audit_rows(settings) if r["action"] == "unsupersede"]
    assert row["entry_id"] == old["id"] and row["outcome"] == "ok" and row["tool"] == "memory_crud"
    assert f'"superseded_by": "{new["id"]}"' in str(row["details"]) or new["id"] in str(row["details"])
    # a top-level if_match works for a single item too, and the old etag no longer does
    again = await _fact(agent, "c", "The API server listens on port 8082.")
    assert set(again["superseded_ids"]) <= {old["id"], new["id"]} and again["superseded_ids"]
    target = again["superseded_ids"][0]
    failed, read = await agent.crud(action="read", items=[{"id": target}])
    failed, data = await agent.crud(action="unsupersede", items=[{"id": target}],
                                    if_match=read["items"][0]["etag"])
    assert not failed and data["items"][0]["superseded_by"] is None


async def test_bad_undo_requests_get_structured_errors_and_change_nothing(agent: Agent) -> None:
    old, new = await _chain(agent)
    failed, data = await agent.crud(action="unsupersede", items=[{"id": new["id"]}])
    assert failed
    [error] = data["errors"]
    assert error["code"] == "INVALID_PARAMS" and error["details"]["field"] == "id"
    assert error["details"]["index"] == 0 and "nothing to undo" in error["message"]
    failed, data = await agent.crud(action="unsupersede", items=[{"id": old["id"], "if_match": "stale"}])
    assert failed
    [error] = data["errors"]
    assert error["code"] == "CONFLICT"
    assert error["details"]["current_etag"] == old["etag"] and error["details"]["current_version"] == old["version"]
    for bad in (MISSING, "not an id"):
        failed, data = await agent.crud(action="unsupersede", items=[{"id": bad}])
        assert failed and data["errors"][0]["code"] == "NOT_FOUND"
    for arguments in ({"items": []}, {"items": [{"id": old["id"], "content": "x"}]},
                      {"items": [{"id": old["id"], "if_match": old["etag"]}], "if_match": "other"},
                      {"items": [{"id": old["id"]}, {"id": new["id"]}], "if_match": old["etag"]},
                      {"items": [{"id": old["id"]}], "filters": {"ids": [old["id"]]}}):
        failed, data = await agent.crud(action="unsupersede", **arguments)
        assert failed and data["items"] == [] and data["errors"][0]["code"] == "INVALID_PARAMS", arguments
        assert set(data["errors"][0]) == {"code", "message", "details"}
    failed, read = await agent.crud(action="read", items=[{"id": old["id"]}])
    assert read["items"][0] == old  # untouched by every refusal
    # bulk: each item on its own
    failed, data = await agent.crud(action="unsupersede", items=[{"id": MISSING}, {"id": old["id"]}])
    assert not failed and [e["id"] for e in data["items"]] == [old["id"]]
    assert data["errors"][0]["code"] == "NOT_FOUND" and data["errors"][0]["details"]["index"] == 0


async def test_only_the_owner_may_undo_and_a_denial_looks_like_a_missing_entry(settings: Settings, mode: str) -> None:
    async with Client(create_server(settings), mode=mode) as client:
        agent = Agent(client)
        old, _ = await _chain(agent)
        for ident in (identity("bob", "sys5", "red"), identity("boss", "sys4", "red"),
                      identity("alice", "sys1", "blue")):
            other = agent.as_(ident)
            # in the owner's namespace: refused before anything is looked up, whether the entry exists or not
            _, real = await other.crud(action="unsupersede", namespace="alice", items=[{"id": old["id"]}])
            _, fake = await other.crud(action="unsupersede", namespace="alice", items=[{"id": MISSING}])
            if ident["agent_id"] == "alice":  # the same agent id in another team: its own namespace, no entry
                assert real["errors"][0]["code"] == "NOT_FOUND"
            else:
                assert real["errors"][0]["code"] == "FORBIDDEN"
            assert str(real).replace(old["id"], MISSING) == str(fake)
            # in its own namespace: the id is not there, exactly as for an id that exists nowhere
            _, real = await other.crud(action="unsupersede", items=[{"id": old["id"]}])
            _, fake = await other.crud(action="unsupersede", items=[{"id": MISSING}])
            assert real["errors"][0]["code"] == "NOT_FOUND"
            assert str(real).replace(old["id"], MISSING) == str(fake)
        failed, read = await agent.crud(action="read", items=[{"id": old["id"]}])
        assert read["items"][0] == old
        no_skill = agent.as_(identity("alice", "sys1", "red", skills=["memory_retrieve"]))
        failed, data = await no_skill.crud(action="unsupersede", items=[{"id": old["id"]}])
        assert failed and data["errors"][0]["code"] == "FORBIDDEN"
    denials = [r for r in audit_rows(settings) if r["action"] == "unsupersede" and r["outcome"] == "denied"]
    # namespace-level refusals (no entry named) and the entry-level one (red alice's fact asked by blue alice)
    assert {(r["agent_id"], r["team"]) for r in denials} >= {("bob", "red"), ("boss", "red"), ("alice", "blue")}
    assert {r["entry_id"] for r in denials if r["agent_id"] == "alice"} == {old["id"]}


async def test_a_team_chain_is_undone_by_a_team_writer_not_a_lower_system_type(agent: Agent,
                                                                              settings: Settings) -> None:
    lead = agent.as_(identity("lead", "sys3", "red"))
    where = {"scope": "team", "namespace": "red/ops", "layer": "long_term"}
    old = await lead.create("The red queue drains at 02:00", **where)
    new = await lead.create("The red queue drains at 03:00", **where)
    _execute(settings, f"UPDATE entries SET superseded_by = '{new['id']}' WHERE id = '{old['id']}'")
    member = agent.as_(identity("member", "sys1", "red"))
    failed, data = await member.crud(action="unsupersede", scope="team", namespace="red/ops",
                                     items=[{"id": old["id"]}])
    assert failed and data["errors"][0]["code"] == "FORBIDDEN"
    assert data["errors"][0]["details"]["allowed_system_types"] == ["sys3", "sys4", "sys5"]
    blue = agent.as_(identity("lead", "sys5", "blue"))
    failed, data = await blue.crud(action="unsupersede", scope="team", namespace="red/ops", items=[{"id": old["id"]}])
    assert failed and data["errors"][0]["code"] == "FORBIDDEN"
    failed, data = await lead.crud(action="unsupersede", scope="team", namespace="red/ops",
                                   items=[{"id": old["id"]}])
    assert not failed and data["items"][0]["superseded_by"] is None
    assert data["items"][0]["version"] == old["version"] + 1
