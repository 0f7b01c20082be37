"""Confidence as a contract, through the MCP client on both stores: the default of each source, a
caller's own value on create and update (out of 0..1 or NaN refused), reinforcement by
memory_reflect, what a supersede records, retrieve items carrying it, and `rank_weight_confidence`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mcp import Client

from agent_memory.config import Settings
from agent_memory.contracts.retrieve import MemoryRetrieveResult
from agent_memory.tools.server import create_server
from tests.conftest import Agent, audit_rows, store_settings
from tests.e2e.servers import agent_memory_command, server_env
from tests.e2e.test_stdio_malformed import Wire

pytestmark = pytest.mark.anyio


async def retrieve(agent: Agent, **arguments: object) -> dict:
    result = await agent.client.call_tool("memory_retrieve", arguments)
    MemoryRetrieveResult.model_validate(result.structured_content, strict=True)
    assert not result.is_error, result.structured_content
    return result.structured_content


async def listed(agent: Agent, **filters: object) -> list[dict]:
    failed, data = await agent.crud(action="list", filters=filters, limit=100)
    assert not failed, data
    return data["items"]


async def test_each_source_has_its_default_and_a_given_value_is_kept(agent: Agent) -> None:
    made = {source: await agent.create(f"a {source} note", item={"source": source})
            for source in ("manual", "tool", "import", "reflection")}
    assert {s: e["confidence"] for s, e in made.items()} == {
        "manual": 1.0, "tool": 1.0, "import": 1.0, "reflection": 0.9}
    assert (await agent.create("no source named"))["confidence"] == 1.0
    own = await agent.create("a hunch", item={"confidence": 0.4, "source": "reflection"})
    assert own["confidence"] == 0.4
    failed, data = await agent.crud(action="update", items=[{"id": own["id"], "confidence": 0.65}])
    assert not failed and data["items"][0]["confidence"] == 0.65 and data["items"][0]["version"] == 2
    failed, data = await agent.crud(action="update", items=[{"id": own["id"], "content": "a firmer hunch"}])
    assert not failed and data["items"][0]["confidence"] == 0.65  # not sent: kept
    # A promoted copy keeps the confidence of what it copies.
    failed, data = await agent.crud(action="promote", items=[{"id": own["id"], "target_scope": "agent",
                                                              "target_namespace": "alice/shared"}])
    assert not failed and data["items"][0]["confidence"] == 0.65 and data["items"][0]["source"] == "reflection"
    # Logged turns: user and assistant turns are manual, tool turns tool, all 1.0.
    await agent.log("s", "I deploy from the main branch.", {"role": "tool", "content": "exit code 0"},
                    {"role": "assistant", "content": "Noted, main it is."})
    turns = await listed(agent, session_id="s", layer="session")
    assert sorted((t["source"], t["confidence"]) for t in turns) == [
        ("manual", 1.0), ("manual", 1.0), ("tool", 1.0)]
    # A compaction summary and facts the caller supplies to reflect are reflection, 0.9.
    failed, data = await agent.reflect(action="compact", session_id="s", keep_recent=0)
    assert not failed and data["summary_id"]
    summary = [t for t in await listed(agent, session_id="s", layer="session") if "compaction" in t["tags"]]
    assert [(t["source"], t["confidence"]) for t in summary] == [("reflection", 0.9)] * len(summary) != []
    failed, data = await agent.reflect(action="reflect", session_id="s", facts=["Alice ships from main."])
    assert not failed and [(i["source"], i["confidence"]) for i in data["items"]] == [("reflection", 0.9)]


@pytest.mark.parametrize("bad", [-0.01, 1.01, "NaN"])
async def test_a_confidence_outside_zero_to_one_is_refused(agent: Agent, bad: object) -> None:
    # The SDK client writes a float NaN as null (see test_fuzz._as_sent): NaN as a number on the wire
    # is in test_nan_and_infinity_on_the_wire_are_refused; here the name of it, as text, is refused.
    failed, data = await agent.crud(action="create", items=[{"content": "x", "confidence": bad}])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS" and data["items"] == []
    assert "confidence" in json.dumps(data["errors"][0])
    entry = await agent.create("kept as it was", item={"confidence": 0.5})
    failed, data = await agent.crud(action="update", items=[{"id": entry["id"], "confidence": bad}])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert [(e["content"], e["confidence"]) for e in await listed(agent)] == [("kept as it was", 0.5)]


def test_nan_and_infinity_on_the_wire_are_refused(tmp_path: Path, store_backend: str,
                                                 request: pytest.FixtureRequest) -> None:
    """A raw stdio session writes NaN and Infinity as JSON numbers (Python's json does), which the
    server's parser reads as floats: refused with INVALID_PARAMS, on create and on update."""
    store = {"MEMORY_BACKEND": "postgres", "MEMORY_POSTGRES_URL": request.getfixturevalue("postgres_url")} \
        if store_backend == "postgres" else {}
    proc = subprocess.Popen([agent_memory_command(), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=server_env(tmp_path / "data", **store))
    try:
        wire = Wire(proc)
        assert "result" in wire.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                    "clientInfo": {"name": "raw", "version": "1"}})
        wire.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')

        def crud(arguments: dict) -> dict:
            return wire.call("tools/call", {"name": "memory_crud", "arguments": arguments})["result"]

        made = crud({"action": "create", "items": [{"content": "kept", "confidence": 0.5}]})
        entry_id = made["structuredContent"]["items"][0]["id"]
        for bad in (float("nan"), float("inf"), float("-inf")):
            for arguments in ({"action": "create", "items": [{"content": "x", "confidence": bad}]},
                              {"action": "update", "items": [{"id": entry_id, "confidence": bad}]}):
                result = crud(arguments)
                assert result["isError"] is True, result
                error = result["structuredContent"]["errors"][0]
                assert error["code"] == "INVALID_PARAMS" and error["details"]["field"] == "items[0].confidence"
        listed = crud({"action": "list"})["structuredContent"]["items"]
        assert [(e["content"], e["confidence"], e["version"]) for e in listed] == [("kept", 0.5, 1)]
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]


async def test_a_restated_fact_gains_confidence_each_time_up_to_one(agent: Agent, settings: Settings) -> None:
    await agent.log("s", "Hello there.")
    fact = "Alice prefers tabs over spaces in Python code."
    failed, first = await agent.reflect(action="reflect", session_id="s", facts=[fact])
    assert not failed and first["items"][0]["confidence"] == 0.9
    fact_id = first["items"][0]["id"]
    seen = [0.9]
    for _ in range(2):  # 0.9 + 0.1 * 0.25 = 0.925, then 0.925 + 0.075 * 0.25 = 0.94375
        failed, again = await agent.reflect(action="reflect", session_id="s", facts=[fact])
        assert not failed and again["updated_ids"] == [fact_id] and again["superseded_ids"] == []
        seen.append(again["items"][0]["confidence"])
    assert seen[1] == 0.925 and abs(seen[2] - 0.9438) <= 0.0001 and seen[0] < seen[1] < seen[2] < 1.0
    rows = [json.loads(r["details"]) if isinstance(r["details"], str) else r["details"]
            for r in audit_rows(settings) if r["action"] == "reflect" and r["entry_id"] == fact_id]
    assert [(d["updated"], d["confidence"], d.get("previous_confidence")) for d in rows] == [
        (False, 0.9, None), (True, 0.925, 0.9), (True, seen[2], 0.925)]
    # Capped: a fact already at 1.0 stays there (it is still reinforced: version and etag move).
    sure = "Bob deploys only from the release branch."
    failed, data = await agent.reflect(action="reflect", session_id="s", facts=[sure])
    sure_id = data["items"][0]["id"]
    failed, data = await agent.crud(action="update", items=[{"id": sure_id, "confidence": 1.0}])
    assert not failed
    for version in (3, 4):
        failed, data = await agent.reflect(action="reflect", session_id="s", facts=[sure])
        assert data["updated_ids"] == [sure_id] and data["items"][0]["confidence"] == 1.0
        assert data["items"][0]["version"] == version


async def test_a_supersede_records_both_confidences_and_the_old_keeps_its_own(agent: Agent,
                                                                              settings: Settings) -> None:
    await agent.log("s", "Hello there.")
    failed, first = await agent.reflect(action="reflect", session_id="s", facts=["Alice lives in Lisbon."])
    old = first["items"][0]
    failed, data = await agent.crud(action="update", items=[{"id": old["id"], "confidence": 0.7}])
    assert not failed
    failed, changed = await agent.reflect(action="reflect", session_id="s",
                                          facts=["Alice moved to Porto, she now lives in Porto."])
    assert not failed and changed["superseded_ids"] == [old["id"]], changed
    new = changed["items"][0]
    assert new["confidence"] == 0.9
    failed, data = await agent.crud(action="read", items=[{"id": old["id"]}])
    assert data["items"][0]["superseded_by"] == new["id"] and data["items"][0]["confidence"] == 0.7
    rows = [r for r in audit_rows(settings) if r["action"] == "supersede"]
    details = [json.loads(r["details"]) if isinstance(r["details"], str) else r["details"] for r in rows]
    assert [(r["entry_id"], d["superseded_by"], d["confidence"], d["superseded_by_confidence"])
            for r, d in zip(rows, details, strict=True)] == [(old["id"], new["id"], 0.7, 0.9)]


async def test_retrieved_items_carry_their_confidence(agent: Agent) -> None:
    await agent.create("The staging database is db-07.", item={"confidence": 0.35})
    await agent.create("The staging cache is redis-02.")
    data = await retrieve(agent, query="staging database cache", mode="keyword", min_score=0)
    assert sorted((i["content"], i["confidence"]) for i in data["items"]) == [
        ("The staging cache is redis-02.", 1.0), ("The staging database is db-07.", 0.35)]


@pytest.mark.parametrize("weight", [0.03, 0.0])
async def test_the_confidence_weight_ranks_the_surer_of_two_equal_memories_first(
        tmp_path: Path, store_backend: str, request: pytest.FixtureRequest, weight: float) -> None:
    settings = store_settings(request, tmp_path / "data", store_backend, rank_weight_confidence=weight)
    async with Client(create_server(settings), mode="auto") as client:
        agent = Agent(client)
        # Same words, same length: the same keyword relevance. The surer one is written first (older).
        sure = await agent.create("Rotate the vault keys every quarter, said ops.", item={"confidence": 1.0})
        unsure = await agent.create("Rotate the vault keys every quarter, said dev.", item={"confidence": 0.5})
        data = await retrieve(agent, query="rotate vault keys quarter", mode="keyword", min_score=0)
    items = {i["id"]: i for i in data["items"]}
    assert set(items) == {sure["id"], unsure["id"]}
    assert items[sure["id"]]["score_parts"]["relevance"] == items[unsure["id"]]["score_parts"]["relevance"]
    assert items[sure["id"]]["score_parts"]["confidence"] == round(weight * 1.0, 4)
    assert items[unsure["id"]]["score_parts"]["confidence"] == round(weight * 0.5, 4)
    gap = items[sure["id"]]["score"] - items[unsure["id"]]["score"]
    if weight:
        assert data["items"][0]["id"] == sure["id"] and gap == pytest.approx(weight * 0.5, abs=0.001)
    else:
        assert gap == pytest.approx(0.0, abs=0.001)  # confidence no longer counts
