"""memory_reflect consolidation through the MCP client: restatements reinforce (by meaning, with
clean wording), changes of mind supersede (kept, listable, readable, audited, out of retrieval),
flips are never duplicates, and without the model the lexical rule answers and says so."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from agent_memory.config import Settings
from agent_memory.tools.server import create_server
from tests.conftest import Agent, audit_rows, make_settings

pytestmark = pytest.mark.anyio

TRANSCRIPT = json.loads((Path(__file__).parents[1] / "fixtures" / "transcript_changes.json").read_text())


@pytest.fixture
def semantic_settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "data", vector_backend="chroma")


@pytest.fixture
async def smart(semantic_settings: Settings) -> AsyncIterator[Agent]:
    async with Client(create_server(semantic_settings), mode="auto") as client:
        agent = Agent(client)
        # a semantic retrieve waits (bounded) for the model: consolidation then works by meaning
        await agent.create("The office plants need water on Mondays.")
        with anyio.fail_after(30):
            while True:
                result = await client.call_tool("memory_retrieve", {"query": "plants", "mode": "semantic"})
                if result.structured_content["degraded"] is None:
                    break
                await anyio.sleep(0.1)
        yield agent


async def _facts(agent: Agent) -> list[dict]:
    failed, data = await agent.crud(action="list", filters={"source": "reflection"}, limit=100)
    assert not failed, data
    return data["items"]


async def _reflect(agent: Agent, session_id: str, **arguments: object) -> dict:
    failed, data = await agent.reflect(action="reflect", session_id=session_id, use_sampling=False, **arguments)
    assert not failed, data
    return data


async def test_a_restatement_in_other_words_reinforces_with_clean_wording(smart: Agent) -> None:
    await smart.log("s1", "I prefer tabs over spaces in every Python file, please remember that.")
    first = await _reflect(smart, "s1")
    [fact] = first["items"]
    assert fact["content"] == "The user prefers tabs over spaces in every Python file."
    await smart.log("s2", "Reminder: I prefer tabs over spaces in every Python file.")
    again = await _reflect(smart, "s2")
    assert again["updated_ids"] == [fact["id"]] and again["superseded_ids"] == []
    assert again["consolidation"] == "meaning" and again["degraded"] is None
    paraphrase = await _reflect(smart, "s3", facts=["In Python files the user wants tabs rather than spaces."])
    assert paraphrase["updated_ids"] == [fact["id"]]
    [stored] = await _facts(smart)
    assert stored["id"] == fact["id"] and stored["version"] == 3 and stored["etag"] != fact["etag"]
    assert stored["confidence"] > fact["confidence"] and stored["updated_at"] > fact["updated_at"]


async def test_a_changed_number_or_negation_is_a_change_not_a_duplicate(smart: Agent,
                                                                        semantic_settings: Settings) -> None:
    old = (await _reflect(smart, "a", facts=["The API server listens on port 8080."]))["items"][0]
    changed = await _reflect(smart, "b", facts=["The API server listens on port 8081."])
    [new] = changed["items"]
    assert changed["superseded_ids"] == [old["id"]] and changed["updated_ids"] == []
    failed, read = await smart.crud(action="read", items=[{"id": old["id"]}])
    assert not failed and read["items"][0]["superseded_by"] == new["id"]
    assert read["items"][0]["content"] == old["content"]  # kept as it was
    assert {f["id"] for f in await _facts(smart)} == {old["id"], new["id"]}  # both listable
    hits = await smart.client.call_tool("memory_retrieve", {"query": "Which port does the API server listen on?"})
    found = [i["id"] for i in hits.structured_content["items"]]
    assert found[0] == new["id"] and old["id"] not in found
    rows = [r for r in audit_rows(semantic_settings) if r["action"] == "supersede"]
    assert [(r["entry_id"], json.loads(r["details"])["superseded_by"]) for r in rows] == [(old["id"], new["id"])]
    # a negation of the current fact changes it again; the superseded one is never reinforced
    negated = await _reflect(smart, "c", facts=["The API server no longer listens on port 8081."])
    assert negated["superseded_ids"] == [new["id"]]


async def test_a_transcript_with_five_changes_of_mind(smart: Agent) -> None:
    for session in TRANSCRIPT["sessions"]:
        await smart.log(session["id"], *session["turns"])
        await _reflect(smart, session["id"])
    facts = {f["content"]: f for f in await _facts(smart)}
    current = {c for c, f in facts.items() if f["superseded_by"] is None}
    for old, new in TRANSCRIPT["changed"].items():
        assert facts[old]["superseded_by"] == facts[new]["id"], (old, facts[old])
    assert current == set(TRANSCRIPT["changed"].values()) | set(TRANSCRIPT["stable"]) | set(TRANSCRIPT["added"])
    for stable in TRANSCRIPT["stable"]:
        assert facts[stable]["version"] == 2  # restated once: reinforced, not copied
    context = await smart.client.call_tool("memory_retrieve", {"query": "Where does the user live and who is "
                                                                        "their manager?", "limit": 20,
                                                                        "layers": ["long_term"]})
    said = context.structured_content["context"]
    assert "Lisbon" in said and "Daniel Ortiz" in said and "Berlin" not in said and "Priya" not in said


async def test_without_the_model_the_lexical_rule_answers_and_says_so(settings: Settings) -> None:
    async with Client(create_server(settings), mode="auto") as client:  # vector_backend none: no model
        agent = Agent(client)
        first = await _reflect(agent, "a", facts=["Just so you know, the staging database restarts at 02:00 UTC."])
        assert first["items"][0]["content"] == "The staging database restarts at 02:00 UTC."
        assert first["consolidation"] is None  # nothing to compare with yet
        again = await _reflect(agent, "b", facts=["The staging database restarts at 02:00 UTC, please remember."])
        assert again["updated_ids"] == [first["items"][0]["id"]]
        assert again["consolidation"] == "lexical" and "wording" in again["degraded"]
        changed = await _reflect(agent, "c", facts=["The staging database restarts at 03:00 UTC."])
        assert changed["superseded_ids"] == [first["items"][0]["id"]]


async def test_only_the_callers_own_facts_are_consolidated(smart: Agent) -> None:
    bob = smart.as_({"agent_id": "bob", "system_type": "sys1", "team": "red"})
    mine = (await _reflect(smart, "a", facts=["The API server listens on port 8080."]))["items"][0]
    theirs = await _reflect(bob, "a", facts=["The API server listens on port 8081."])
    assert theirs["superseded_ids"] == [] and theirs["updated_ids"] == []
    failed, read = await smart.crud(action="read", items=[{"id": mine["id"]}])
    assert not failed and read["items"][0]["superseded_by"] is None


async def test_a_superseded_fact_cannot_be_promoted_and_bad_arguments_are_refused(smart: Agent) -> None:
    old = (await _reflect(smart, "a", facts=["The API server listens on port 8080."]))["items"][0]
    new = (await _reflect(smart, "b", facts=["The API server listens on port 8081."]))["items"][0]
    lead = smart.as_({"agent_id": "alice", "system_type": "sys3", "team": "red"})
    failed, data = await lead.crud(action="promote", items=[{"id": old["id"], "target_scope": "team",
                                                             "target_namespace": "red/ops"}])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert data["errors"][0]["details"]["superseded_by"] == new["id"]
    failed, data = await smart.reflect(action="reflect", session_id="x", facts=["   "])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    failed, data = await smart.reflect(action="reflect", session_id="x", facts=["fact"] * 101)
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"


async def test_a_fact_about_another_server_or_office_is_stored_beside_it_and_retrieval_still_finds_it(
        smart: Agent) -> None:
    alpha = (await _reflect(smart, "a", facts=["Server alpha has 64 GB of RAM."]))["items"][0]
    bravo = await _reflect(smart, "b", facts=["Server bravo has 128 GB of RAM."])
    assert bravo["consolidation"] == "meaning"  # judged with the model, not the lexical fallback
    assert bravo["superseded_ids"] == [] and bravo["updated_ids"] == [] and len(bravo["items"]) == 1
    berlin = (await _reflect(smart, "c", facts=["The Berlin office opens at 8:00."]))["items"][0]
    munich = await _reflect(smart, "d", facts=["The Munich office now opens at 9:00 for the summer."])
    assert munich["superseded_ids"] == [] and munich["updated_ids"] == []
    facts = {f["id"]: f for f in await _facts(smart)}
    assert all(f["superseded_by"] is None for f in facts.values()) and len(facts) == 4
    hits = await smart.client.call_tool("memory_retrieve", {"query": "How much RAM does server alpha have?"})
    found = [i["id"] for i in hits.structured_content["items"]]
    assert found[0] == alpha["id"], hits.structured_content["items"]
    # the same office said as a change still supersedes
    summer = await _reflect(smart, "e", facts=["The Berlin office now opens at 9:30 for the summer."])
    assert summer["superseded_ids"] == [berlin["id"]]
