"""memory_retrieve end to end: hybrid recall, safety across teams, budgets, compression, audit."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from agent_memory.config import Settings
from agent_memory.contracts.retrieve import MemoryRetrieveResult
from agent_memory.core.recall.context import CLOSE, OPEN
from agent_memory.tools.server import create_server
from tests.conftest import IDENTITY_KEY, Agent, audit_rows, identity, make_settings, store_settings

pytestmark = pytest.mark.anyio


async def retrieve(agent: Agent, **arguments: Any) -> tuple[bool, dict]:
    meta = {IDENTITY_KEY: agent.ident} if agent.ident is not None else None
    result = await agent.client.call_tool("memory_retrieve", arguments, meta=meta)
    MemoryRetrieveResult.model_validate(result.structured_content, strict=True)
    assert json.loads(result.content[0].text) == result.structured_content
    return bool(result.is_error), result.structured_content


async def semantic_until(agent: Agent, query: str, done: Any = None, timeout: float = 60,
                         **arguments: Any) -> dict:
    """Retrieve by meaning until semantic search answers (not degraded) and `done(data)` holds
    (with the relevance floors off unless given: these queries test other things)."""
    arguments.setdefault("min_score", 0)
    arguments.setdefault("relative_floor", 0)
    with anyio.fail_after(timeout):
        while True:
            failed, data = await retrieve(agent, query=query, mode="semantic", **arguments)
            # Until it can answer, mode semantic says why: an error when keywords find nothing either.
            assert not failed or data["errors"][0]["details"].get("reason") == "semantic_unavailable", data
            if not failed and data["degraded"] is None and data["items"] and (done is None or done(data)):
                return data
            await anyio.sleep(0.1)


async def settled(agent: Agent, query: str, expected_id: str, **arguments: Any) -> dict:
    """Retrieve until semantic search is ready and has indexed `expected_id` (bounded wait)."""
    return await semantic_until(agent, query, lambda d: expected_id in [i["id"] for i in d["items"]], **arguments)


@pytest.fixture
async def semantic_agent(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> AsyncIterator[Agent]:
    # "Found by meaning" must mean "in the vector index" in these tests: no in-call embedding.
    settings = store_settings(request, tmp_path / "data", store_backend, vector_backend="chroma",
                              retrieval_inline_embed_max=0)
    async with Client(create_server(settings), mode="auto") as client:
        yield Agent(client)


@pytest.fixture
async def fresh_agent(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> AsyncIterator[Agent]:
    # the default read-your-writes
    settings = store_settings(request, tmp_path / "data", store_backend, vector_backend="chroma")
    async with Client(create_server(settings), mode="auto") as client:
        yield Agent(client)


async def test_hybrid_finds_a_paraphrase_and_a_keyword_match(semantic_agent: Agent) -> None:
    agent = semantic_agent
    vault = await agent.create("The deploy key is kept in the team vault under ops/keys.")
    await agent.create("Lunch on Fridays is usually pizza.")
    await agent.create("The staging database restarts every night at 02:00 UTC.")
    await settled(agent, "where is the secret for deployments stored?", vault["id"])
    failed, data = await retrieve(agent, query="Where do we store the credentials used to deploy?")
    assert not failed and data["degraded"] is None
    assert data["items"][0]["id"] == vault["id"]
    parts = data["items"][0]["score_parts"]
    assert parts["semantic"] > 0 and data["items"][0]["score"] > 0
    failed, data = await retrieve(agent, query="staging database restart", mode="keyword")
    assert data["items"][0]["content"].startswith("The staging database")
    assert data["items"][0]["score_parts"]["semantic"] == 0


@pytest.mark.parametrize("query", ['"unbalanced', "AND OR NOT", "deploy*", "NEAR(deploy key", "scope:agent",
                                   "((key", "key)", "-key", "^key", "'; DROP TABLE entries; --", "   ", "中文 查询"])
async def test_any_user_text_is_safe_for_keyword_search(agent: Agent, query: str) -> None:
    await agent.create("The deploy key is kept in the vault.")
    failed, data = await retrieve(agent, query=query, mode="keyword")
    if query.strip():
        assert not failed, data
    else:
        assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"


async def test_degraded_to_keywords_when_semantic_search_is_off(agent: Agent) -> None:
    entry = await agent.create("Rotate the API tokens every ninety days.")
    failed, data = await retrieve(agent, query="rotate tokens")
    assert not failed and data["degraded"] and "vector_backend" in data["degraded"]
    assert [i["id"] for i in data["items"]] == [entry["id"]]


async def test_a_caller_never_receives_what_it_cannot_read(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data")
    async with Client(create_server(settings)) as client:
        base = Agent(client)
        writers = {
            ("alice", "red"): base.as_(identity("alice", "sys3", "red")),
            ("bob", "red"): base.as_(identity("bob", "sys3", "red")),
            ("carol", "blue"): base.as_(identity("carol", "sys3", "blue")),
            ("root", "blue"): base.as_(identity("root", "sys4", "blue")),
        }
        made: dict[str, tuple[str, str, str | None, str]] = {}  # id -> (scope, namespace, team, owner)
        for (name, team), writer in writers.items():
            e = await writer.create(f"zebra fact private to {name}")
            made[e["id"]] = ("agent", name, team, name)
            e = await writer.create(f"zebra fact for team {team} by {name}", scope="team", namespace=team,
                                    layer="long_term")
            made[e["id"]] = ("team", team, team, name)
        e = await writers[("root", "blue")].create("zebra global policy", scope="global", namespace="global",
                                                   layer="meta")
        made[e["id"]] = ("global", "global", None, "root")
        for system_type in ("sys1", "sys2", "sys3", "sys4", "sys5"):
            for name, team in (("alice", "red"), ("carol", "blue"), ("dave", "red")):
                reader = base.as_(identity(name, system_type, team))
                failed, data = await retrieve(reader, query="zebra fact policy", limit=50, mode="keyword")
                assert not failed
                got = {i["id"] for i in data["items"]}
                allowed = {i for i, (scope, ns, t, owner) in made.items()
                           if (scope == "agent" and owner == name and t == team)
                           or (scope == "team" and ns == team)
                           or (scope == "global" and system_type == "sys4")}
                assert got == allowed, (system_type, name)


async def test_expired_and_conflict_entries_are_not_retrieved(agent: Agent) -> None:
    keep = await agent.create("walrus note that stays")
    await agent.create("walrus note that expires", item={"ttl_seconds": 1})
    original = await agent.create("walrus original")
    await agent.crud(action="update", items=[{"id": original["id"], "content": "walrus updated"}])
    _, data = await agent.crud(action="update", if_match=original["etag"],
                               items=[{"id": original["id"], "content": "walrus conflicting edit"}])
    conflict_id = data["errors"][0]["details"]["conflict_id"]
    with anyio.fail_after(5):
        while True:
            _, data = await retrieve(agent, query="walrus", mode="keyword", limit=50)
            ids = [i["id"] for i in data["items"]]
            if len(ids) == 2:
                break
            await anyio.sleep(0.1)
    assert set(ids) == {keep["id"], original["id"]} and conflict_id not in ids


async def test_context_never_exceeds_the_budget(agent: Agent) -> None:
    for i in range(12):
        await agent.create(f"Otter fact number {i}. " + "Otters hold hands while sleeping. " * (i + 1))
    for budget in (60, 150, 400, 1000, 5000):
        failed, data = await retrieve(agent, query="otter sleeping", mode="keyword", max_chars=budget, limit=12)
        assert not failed
        assert len(data["context"]) == data["used_chars"] <= budget == data["budget_chars"]
        lines = data["context"].splitlines()
        if data["items"]:  # one line each between the delimiters
            assert lines[0] == OPEN and lines[-1] == CLOSE and len(lines) == len(data["items"]) + 2
        else:  # nothing fits (60 characters do not hold the delimiters): no empty frame
            assert data["context"] == "" and data["dropped"] > 0
    failed, data = await retrieve(agent, query="otter", mode="keyword", max_tokens=50, limit=12)
    assert data["budget_chars"] == 200 and data["used_chars"] <= 200 and data["dropped"] > 0
    failed, data = await retrieve(agent, query="otter", mode="keyword", per_entry_max_chars=40, limit=3)
    assert all(len(i["content"]) <= 40 for i in data["items"]) and any(i["truncated"] for i in data["items"])


async def test_each_context_line_names_scope_layer_id_date_author_and_namespace(agent: Agent) -> None:
    entry = await agent.create("Badgers dig setts.", item={"layer": "working"})
    _, data = await retrieve(agent, query="badgers", mode="keyword")
    owner = entry["owner_agent_id"]
    assert data["context"] == (f"{OPEN}\n- [agent/working {entry['id']} {entry['created_at'][:10]} by {owner} in "
                               f"{entry['namespace']}] Badgers dig setts.\n{CLOSE}")
    assert data["used_chars"] == len(data["context"])


async def test_tool_output_is_cut_to_head_and_tail_at_prompt_time_only(agent: Agent) -> None:
    log = "pytest run started\n" + "\n".join(f"test_{i} PASSED" for i in range(200)) + "\nFINAL: 3 failed"
    entry = await agent.create(log, item={"source": "tool"})
    _, data = await retrieve(agent, query="pytest final failed", mode="keyword", per_entry_max_chars=120)
    text = data["items"][0]["content"]
    assert text.startswith("pytest run started") and text.endswith("FINAL: 3 failed") and "…" in text
    assert len(text) <= 120 and data["items"][0]["truncated"]
    _, stored = await agent.crud(action="read", items=[{"id": entry["id"]}])
    assert stored["items"][0]["content"] == log


async def test_near_duplicates_keep_the_best_one(agent: Agent) -> None:
    await agent.create("The heron nests by the river.", item={"priority": "low"})
    best = await agent.create("The heron nests by the river!", item={"priority": "high"})
    other = await agent.create("Herons eat fish from the river.")
    _, data = await retrieve(agent, query="heron river", mode="keyword")
    assert [i["id"] for i in data["items"]] == [best["id"], other["id"]]


async def test_every_returned_id_is_audited(settings: Settings) -> None:
    async with Client(create_server(settings)) as client:
        agent = Agent(client)
        a = await agent.create("lynx one")
        b = await agent.create("lynx two")
        await retrieve(agent, query="lynx", mode="keyword")
    events = [r for r in audit_rows(settings) if r["action"] == "memory_retrieval"]
    assert sorted(r["entry_id"] for r in events) == sorted([a["id"], b["id"]])
    assert all(r["tool"] == "memory_retrieve" and r["agent_id"] == "alice" for r in events)


@pytest.mark.parametrize(("arguments", "field"), [
    ({}, "query"),
    ({"query": ""}, "query"),
    ({"query": "x", "limit": 51}, "limit"),
    ({"query": "x", "mode": "psychic"}, "mode"),
    ({"query": "x", "scopes": ["cosmic"]}, "scopes[0]"),
    ({"query": "x", "max_chars": 0}, "max_chars"),
    ({"query": "x", "extra": 1}, "extra"),
])
async def test_bad_retrieve_arguments_are_invalid_params(agent: Agent, arguments: dict, field: str) -> None:
    failed, data = await retrieve(agent, **arguments)
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS" and data["errors"][0]["details"]["field"] == field


async def test_canonical_line_carries_retrieval_metrics(agent: Agent) -> None:
    from structlog.contextvars import merge_contextvars
    from structlog.testing import capture_logs

    await agent.create("Moths are drawn to light.")
    with capture_logs(processors=[merge_contextvars]) as logs:
        await retrieve(agent, query="moths light", mode="keyword")
        await retrieve(agent, query="submarine volcano", mode="keyword")
    lines = [e for e in logs if e["event"] == "tool_invocation" and e["tool"] == "memory_retrieve"]
    assert [(e["hits"], e["retrievals"], e["hit_rate"]) for e in lines] == [(1, 1, 1.0), (0, 2, 0.5)]
    assert lines[0]["injected_chars"] > 0 and {"keyword", "rank", "total"} <= set(lines[0]["stages_ms"])
    assert "Moths" not in repr(lines)


async def test_every_query_word_matches_in_a_small_store(agent: Agent) -> None:
    ids = {(await agent.create(text))["id"] for text in
           ("Owls hunt at night.", "Bats fly in the dark.", "Fireflies glow at dusk.")}
    _, data = await retrieve(agent, query="night dark dusk", mode="keyword")
    assert {i["id"] for i in data["items"]} == ids


async def test_sqlite_keeps_a_copy_of_each_vector_in_step_with_its_entry(semantic_agent: Agent,
                                                                         tmp_path: Path) -> None:
    import sqlite3

    agent = semantic_agent
    kept = await agent.create("Kestrels hover over motorway verges hunting voles.")
    gone = await agent.create("Herons stand still in shallow water for hours.")
    await settled(agent, "birds of prey hunting", kept["id"])
    await settled(agent, "patient wading birds", gone["id"])

    def stored() -> dict[str, int]:
        conn = sqlite3.connect(tmp_path / "data" / "memory.db")
        try:
            return {i: len(v) for i, v in conn.execute("SELECT entry_id, vector FROM entry_vectors")}
        finally:
            conn.close()

    assert stored() == {kept["id"]: 768, gone["id"]: 768}  # 384 float16 values each
    # A keyword candidate's cosine comes from that copy.
    failed, data = await retrieve(agent, query="kestrels voles")
    assert not failed and data["items"][0]["id"] == kept["id"] and data["items"][0]["score_parts"]["semantic"] > 0
    failed, _ = await agent.crud(action="delete", items=[{"id": gone["id"]}])
    assert not failed and stored() == {kept["id"]: 768}  # gone with its entry, in the same transaction


PROJECT_NOTES = ("The deploy pipeline runs on GitHub Actions and pushes images to the internal registry.",
                 "Database migrations must be reviewed by the platform team before release.",
                 "The staging cluster is rebuilt every Monday morning from the main branch.",
                 "Our API rate limit is 600 requests per minute per customer key.",
                 "On-call engineers rotate weekly; the handover happens on Friday at noon.")


async def test_a_question_the_store_knows_nothing_about_returns_nothing(semantic_agent: Agent) -> None:
    agent = semantic_agent
    ids = [(await agent.create(note))["id"] for note in PROJECT_NOTES]
    await settled(agent, "who reviews schema migrations", ids[1])
    failed, data = await retrieve(agent, query="What is the weather forecast for Paris tomorrow?")
    assert not failed and data["degraded"] is None
    assert data["items"] == [] and data["context"] == "" and data["used_chars"] == 0
    assert data["min_score"] == 0.45 and data["withheld"] > 0  # said, not silently empty
    failed, data = await retrieve(agent, query="Who has to review database migrations?")
    assert data["items"][0]["id"] == ids[1] and data["items"][0]["score_parts"]["match"] >= 0.45
    # The floors are the caller's to move: off, the least bad candidates come back again.
    failed, data = await retrieve(agent, query="What is the weather forecast for Paris tomorrow?", min_score=0,
                                  relative_floor=0)
    assert len(data["items"]) == 5 and data["min_score"] == 0 and data["withheld"] == 0
    # Keyword-only answers are not floored (the floor needs meaning) and say so.
    failed, data = await retrieve(agent, query="weather tomorrow Monday", mode="keyword")
    assert data["items"] and data["min_score"] == 0


@pytest.mark.parametrize("bad", [-0.1, 1.5, "high", True, None])
async def test_min_score_outside_0_to_1_is_invalid_params(agent: Agent, bad: Any) -> None:
    arguments = {"query": "anything", "min_score": bad}
    failed, data = await retrieve(agent, **arguments)
    if bad is None:  # null means the default
        assert not failed
        return
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert data["errors"][0]["details"]["field"] == "min_score"


async def test_what_was_just_written_is_found_by_meaning_at_once(fresh_agent: Agent) -> None:
    """3,000 memories written in bursts, then a paraphrase of the last one asked at once: the index
    is far behind, yet the newest memories are searched by meaning in the call, and what could
    not be is counted and said."""
    agent = fresh_agent
    animals = ["otter", "heron", "badger", "lynx", "marten", "plover", "newt", "vole", "stoat", "wren"]
    for burst in range(30):
        for start in range(0, 100, 10):
            failed, data = await agent.crud(action="create", items=[
                {"content": f"Survey {burst}-{start + n}: a {animals[n]} was counted near marker "
                            f"{burst * 100 + start + n}."} for n in range(10)])
            assert not failed
    target = await agent.create("The intern moved the weekly retro to Thursday afternoons.")
    failed, data = await retrieve(agent, query="When does our regular team retrospective happen now?", min_score=0)
    assert not failed
    assert data["items"][0]["id"] == target["id"], data["items"][:2]
    parts = data["items"][0]["score_parts"]
    assert parts["semantic"] > 0 and parts["keyword"] == 0  # found by meaning, not by a shared word
    waiting = data["keyword_only"]
    assert waiting > 0 and f"{waiting} memories written moments ago" in data["degraded"]
    with anyio.fail_after(300):  # once the index has caught up, nothing is keyword-only any more
        while data["keyword_only"] or data["degraded"]:
            await anyio.sleep(0.5)
            failed, data = await retrieve(agent, query="When does our regular team retrospective happen now?",
                                          min_score=0)
