"""memory_reflect through the MCP client: log, compact, reflect (every engine), limits, gate."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import Client, types

from agent_memory.config import Settings
from agent_memory.tools.server import create_server
from tests.conftest import IDENTITY_KEY, Agent, audit_rows, identity, make_settings

pytestmark = pytest.mark.anyio

TRANSCRIPT = json.loads((Path(__file__).parents[1] / "fixtures" / "transcript_deploy.json").read_text())


async def _list_session(agent: Agent, session_id: str) -> list[dict]:
    failed, data = await agent.crud(action="list", filters={"session_id": session_id}, limit=100)
    assert not failed, data
    return data["items"]


async def _retrieve(agent: Agent, query: str, **arguments: object) -> dict:
    result = await agent.client.call_tool("memory_retrieve", {"query": query, "mode": "keyword", **arguments})
    assert not result.is_error, result.structured_content
    return result.structured_content


async def test_log_stores_turns_in_the_callers_session(agent: Agent, settings: Settings) -> None:
    data = await agent.log("s1", "I prefer dark mode in every editor.",
                           {"role": "assistant", "content": "Noted, dark mode it is."},
                           {"role": "tool", "name": "shell", "content": "$ ls\nREADME.md"},
                           {"role": "user", "name": "Alice", "content": "Thanks!", "at": "2026-01-02T03:04:05+01:00"})
    assert data["turns_processed"] == 4 and data["truncated"] == [] and data["compacted"] == 0
    turns = data["items"]
    assert {t["layer"] for t in turns} == {"session"} and {t["scope"] for t in turns} == {"agent"}
    assert {t["namespace"] for t in turns} == {"alice"} and {t["session_id"] for t in turns} == {"s1"}
    assert [t["tags"] for t in turns] == [["role:user"], ["role:assistant"], ["role:tool", "name:shell"],
                                          ["role:user", "name:Alice"]]
    assert [t["source"] for t in turns] == ["manual", "manual", "tool", "manual"]
    assert turns[3]["created_at"] == "2026-01-02T02:04:05.000000Z"
    listed = await _list_session(agent, "s1")
    assert {t["id"] for t in listed} == {t["id"] for t in turns}
    assert all(not t["compacted"] for t in listed)
    rows = [r for r in audit_rows(settings) if r["tool"] == "memory_reflect"]
    assert [r["action"] for r in rows] == ["log"] * 4


async def test_log_limits_and_bad_turns_are_refused_and_nothing_is_written(agent: Agent) -> None:
    many = [{"role": "user", "content": f"turn {n}"} for n in range(101)]
    failed, data = await agent.reflect(action="log", session_id="s", turns=many)
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS" and "100" in data["errors"][0]["message"]
    for bad in ([{"role": "narrator", "content": "x"}], [{"role": "user", "content": ""}],
                [{"role": "user", "content": "x", "at": "yesterday"}], [{"role": "user", "content": "x", "mood": 1}],
                [{"role": "user", "content": "x", "name": "a\nb"}], []):
        failed, data = await agent.reflect(action="log", session_id="s", turns=bad)
        assert failed and data["errors"][0]["code"] == "INVALID_PARAMS", (bad, data)
    for session_id in ("", "has space", "x" * 129, "semi;colon"):
        failed, data = await agent.reflect(action="log", session_id=session_id,
                                           turns=[{"role": "user", "content": "x"}])
        assert failed and data["errors"][0]["code"] == "INVALID_PARAMS", session_id
    failed, data = await agent.reflect(action="reflect", session_id="s", turns=[{"role": "user", "content": "x"}])
    assert failed and data["errors"][0]["details"]["field"] == "turns"
    failed, data = await agent.reflect(action="compact", session_id="s", facts=["x"])
    assert failed and data["errors"][0]["details"]["field"] == "facts"
    assert await _list_session(agent, "s") == []


async def test_a_long_turn_is_cut_to_the_cap_and_reported(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "d", session_log_max_chars=100, compaction_threshold_chars=0)
    async with Client(create_server(settings), mode="legacy") as client:
        data = await Agent(client).log("s", "short one", "y" * 500)
    assert data["truncated"] == [1]
    assert len(data["items"][1]["content"]) == 100 and data["items"][1]["content"].endswith("…")


async def test_session_logging_can_be_switched_off(tmp_path: Path) -> None:
    async with Client(create_server(make_settings(tmp_path / "d", session_logging=False))) as client:
        failed, data = await Agent(client).reflect(action="log", session_id="s",
                                                   turns=[{"role": "user", "content": "hello there friend"}])
    assert failed and data["errors"][0]["code"] == "NOT_IMPLEMENTED"


async def test_compact_keeps_recent_turns_and_hides_older_ones_from_retrieval(agent: Agent, settings: Settings) -> None:
    topics = ["kayaking", "astronomy", "pottery", "chess", "gardening", "baking", "climbing", "sailing"]
    logged = await agent.log("trip", *[f"I enjoy {topic} on weekends with my cousin." for topic in topics])
    ids = [t["id"] for t in logged["items"]]
    failed, data = await agent.reflect(action="compact", session_id="trip", keep_recent=3)
    assert not failed, data
    # Five older turns, at most two a summary: three summaries, each naming the turns it covers.
    summaries = data["items"]
    assert data["compacted"] == 5 and data["summary_id"] == summaries[-1]["id"]
    assert [s["tags"] for s in summaries] == [["compaction", "turns:1-1"], ["compaction", "turns:2-3"],
                                              ["compaction", "turns:4-5"]]
    for summary in summaries:
        assert summary["layer"] == "session" and summary["source"] == "reflection" and summary["session_id"] == "trip"
    assert "kayaking" in summaries[0]["content"] and "astronomy" in summaries[1]["content"]
    listed = {t["id"]: t for t in await _list_session(agent, "trip")}
    assert set(listed) == set(ids) | {s["id"] for s in summaries}  # originals kept and listable
    assert [listed[i]["compacted"] for i in ids] == [True] * 5 + [False] * 3
    # Compacted turns leave retrieval; the summary covering them stands in; recent turns stay.
    found = await _retrieve(agent, "kayaking")
    assert [i["id"] for i in found["items"]] == [summaries[0]["id"]]
    assert [i["id"] for i in (await _retrieve(agent, "gardening"))["items"]] == [summaries[2]["id"]]
    assert [i["id"] for i in (await _retrieve(agent, "sailing"))["items"]] == [ids[-1]]
    # Nothing older than the recent turns is left: compacting again does nothing.
    failed, again = await agent.reflect(action="compact", session_id="trip", keep_recent=3)
    assert not failed and again["compacted"] == 0 and again["summary_id"] is None and again["items"] == []
    actions = [r["action"] for r in audit_rows(settings) if r["tool"] == "memory_reflect"]
    assert actions.count("compact") == 1


async def test_a_session_past_the_threshold_compacts_itself(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "d", compaction_threshold_chars=300, compaction_keep_recent=2)
    async with Client(create_server(settings), mode="legacy") as client:
        agent = Agent(client)
        first = await agent.log("s", *[f"Note number {n}: the quick brown fox jumps." for n in range(5)])
        assert first["compacted"] == 0  # 5 x ~42 characters: under the threshold
        second = await agent.log("s", *[f"Note number {n}: the lazy dog sleeps all day." for n in range(5, 10)])
        assert second["compacted"] == 8 and second["summary_id"] is not None
        turns = await _list_session(agent, "s")
    assert sum(t["compacted"] for t in turns) == 8 and len(turns) == 10 + 4  # 8 turns in 4 summaries


async def test_reflect_extracts_facts_and_rules_and_leaves_chit_chat_out(agent: Agent, settings: Settings) -> None:
    await agent.log("deploy", *TRANSCRIPT)
    failed, data = await agent.reflect(action="reflect", session_id="deploy", use_sampling=False)
    assert not failed, data
    assert data["engine"] == "extractive" and data["turns_processed"] == len(TRANSCRIPT)
    facts = {i["content"] for i in data["items"] if i["layer"] == "long_term"}
    rules = {i["content"] for i in data["items"] if i["layer"] == "meta"}
    assert "Never deploy to production on Fridays." in rules
    assert "Always deploy to staging first and wait for the smoke tests to pass." in rules
    assert any("15 minutes" in r for r in rules)
    assert any("imperative mood" in r for r in rules)
    assert "Dana prefers small pull requests over big bang merges, it keeps reviews sane." in facts
    assert any("migrations as a separate job" in f for f in facts)
    assert any("GitHub Actions" in f for f in facts)
    assert any("tech lead for billing" in f for f in facts)
    everything = " ".join(facts | rules).lower()
    for chatter in ("thanks", "lol", "berlin", "talk tomorrow", "kubectl", "happy to help"):
        assert chatter not in everything, chatter
    for item in data["items"]:
        assert item["source"] == "reflection" and item["scope"] == "agent" and 0 < item["confidence"] <= 1
    # The watermark: reflecting again processes nothing; new turns only are processed next time.
    failed, again = await agent.reflect(action="reflect", session_id="deploy")
    assert not failed and again["engine"] is None and again["turns_processed"] == 0 and again["items"] == []
    await agent.log("deploy", "Ok.", "I live in Lisbon these days.")
    failed, third = await agent.reflect(action="reflect", session_id="deploy")
    assert third["turns_processed"] == 2
    assert [i["content"] for i in third["items"]] == ["The user lives in Lisbon these days."]
    actions = [r["action"] for r in audit_rows(settings) if r["tool"] == "memory_reflect"]
    assert actions.count("reflect") == len(data["items"]) + 1


async def test_a_developer_session_is_distilled_into_its_facts_and_rules_and_a_one_off_request_into_nothing(
        agent: Agent) -> None:
    await agent.log("ship", "Our staging database is db-07 on port 6543; the deploy window is Thursdays 14:00 UTC.",
                    {"role": "assistant", "content": "Noted. Shall I run the test suite now?"},
                    "Run the ios tests too.",
                    {"role": "tool", "name": "shell", "content": "$ make test-ios\n42 passed, 0 failed"},
                    "bump celery to 5.4 while you're in there, actually no, scrap that",
                    "we never release on Fridays")
    failed, data = await agent.reflect(action="reflect", session_id="ship", use_sampling=False)
    assert not failed, data
    assert data["engine"] == "extractive" and data["turns_processed"] == 6
    facts = sorted((i["content"], i["tags"]) for i in data["items"] if i["layer"] == "long_term")
    assert facts == [("Our staging database is db-07 on port 6543.", ["reflection", "kind:fact"]),
                     ("The deploy window is Thursdays 14:00 UTC.", ["reflection", "kind:fact"])]
    assert [(i["layer"], i["content"]) for i in data["items"] if i["layer"] == "meta"] == [
        ("meta", "We never release on Fridays.")]
    everything = " ".join(i["content"] for i in data["items"]).lower()
    for left_out in ("ios", "celery", "noted", "test suite", "passed"):
        assert left_out not in everything, left_out


async def test_a_repeated_fact_reinforces_the_existing_one(agent: Agent) -> None:
    await agent.log("a", "I prefer tabs over spaces in Python code.")
    failed, first = await agent.reflect(action="reflect", session_id="a")
    fact = first["items"][0]
    await agent.log("b", "Honestly, I prefer tabs over spaces in Python code!")
    failed, second = await agent.reflect(action="reflect", session_id="b")
    assert not failed and second["updated_ids"] == [fact["id"]]
    again = second["items"][0]
    assert again["id"] == fact["id"] and again["version"] == 2 and again["confidence"] > fact["confidence"]
    assert again["updated_at"] > fact["updated_at"] and again["etag"] != fact["etag"]
    failed, listed = await agent.crud(action="list", filters={"layer": "long_term"})
    assert [i["id"] for i in listed["items"]] == [fact["id"]]


async def test_caller_supplied_facts_and_rules_win(agent: Agent) -> None:
    await agent.log("s", "I prefer tea to coffee.")
    failed, data = await agent.reflect(action="reflect", session_id="s", facts=["Alice drinks tea, not coffee."],
                                       rules=["Offer tea first."])
    assert not failed and data["engine"] == "supplied"
    assert sorted((i["layer"], i["content"]) for i in data["items"]) == [
        ("long_term", "Alice drinks tea, not coffee."), ("meta", "Offer tea first.")]
    failed, data = await agent.reflect(action="reflect", session_id="s", facts=["x"] * 3, max_items=2)
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    failed, data = await agent.reflect(action="reflect", session_id="s", facts=["   "])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"


async def test_reflect_needs_the_skill_and_turns_stay_private(client: Client) -> None:
    no_skill = Agent(client, identity("bob", skills=["memory_crud"]))
    failed, data = await no_skill.reflect(action="log", session_id="s",
                                          turns=[{"role": "user", "content": "hi there you"}])
    assert failed and data["errors"][0]["code"] == "FORBIDDEN"
    bob = Agent(client, identity("bob"))
    await bob.log("s", "My locker code is 4512 and I like it.")
    carol = Agent(client, identity("carol"))
    failed, data = await carol.crud(action="list", namespace="bob", filters={"session_id": "s"})
    assert failed and data["errors"][0]["code"] == "FORBIDDEN"
    found = await client.call_tool("memory_retrieve", {"query": "locker code", "mode": "keyword"},
                                   meta={IDENTITY_KEY: identity("carol")})
    assert found.structured_content["items"] == []
    # Carol's own session of the same name is hers alone.
    failed, data = await carol.reflect(action="reflect", session_id="s")
    assert not failed and data["engine"] is None


def _sampling_answer(text: str):  # noqa: ANN202
    async def callback(context, params: types.CreateMessageRequestParams):  # noqa: ANN001, ANN202
        assert "Never deploy on weekends" in params.messages[0].content.text
        return types.CreateMessageResult(role="assistant", model="test-model",
                                         content=types.TextContent(type="text", text=text))
    return callback


async def test_reflect_asks_the_clients_model_through_sampling(settings) -> None:  # noqa: ANN001
    answer = json.dumps({"facts": [{"content": "Alice runs the weekend on-call rota.", "confidence": 0.9}],
                         "rules": ["Do not deploy on Saturdays or Sundays."]})
    async with Client(create_server(settings), mode="legacy", sampling_callback=_sampling_answer(answer)) as client:
        agent = Agent(client)
        await agent.log("s", "Never deploy on weekends, I run the on-call rota then.")
        failed, data = await agent.reflect(action="reflect", session_id="s")
    assert not failed and data["engine"] == "sampling" and data["fallback_reason"] is None
    assert sorted((i["layer"], i["content"], i["confidence"]) for i in data["items"]) == [
        ("long_term", "Alice runs the weekend on-call rota.", 0.9),
        ("meta", "Do not deploy on Saturdays or Sundays.", 0.7)]


@pytest.mark.parametrize("answer", ["I think the user likes deploys.", "{\"facts\": \"lots\"}",
                                    "{\"facts\": [{\"content\": \"x\", \"confidence\": 7}]}", "{}"])
async def test_malformed_model_output_falls_back_to_extraction(settings, answer: str) -> None:  # noqa: ANN001
    async with Client(create_server(settings), mode="legacy", sampling_callback=_sampling_answer(answer)) as client:
        agent = Agent(client)
        await agent.log("s", "Never deploy on weekends, I run the on-call rota then.")
        failed, data = await agent.reflect(action="reflect", session_id="s")
    assert not failed and data["engine"] == "extractive" and data["fallback_reason"]
    assert [i["content"] for i in data["items"]] == ["Never deploy on weekends, I run the on-call rota then."]


async def test_no_sampling_without_the_capability_or_on_the_modern_protocol(settings) -> None:  # noqa: ANN001
    for mode in ("legacy", "auto"):
        async with Client(create_server(settings), mode=mode) as client:
            agent = Agent(client)
            await agent.log(f"s-{mode}", "Never deploy on weekends, please.")
            failed, data = await agent.reflect(action="reflect", session_id=f"s-{mode}")
        assert not failed and data["engine"] == "extractive" and data["fallback_reason"] is None


async def test_the_background_job_reflects_new_sessions(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "d", reflection_interval_seconds=0.2)
    async with Client(create_server(settings), mode="legacy") as client:
        agent = Agent(client)
        await agent.log("s", "I prefer green tea in the afternoon.")
        with anyio.fail_after(10):
            while True:
                failed, data = await agent.crud(action="list", filters={"layer": "long_term"})
                if data["items"]:
                    break
                await anyio.sleep(0.1)
        assert data["items"][0]["content"] == "The user prefers green tea in the afternoon."
        failed, again = await agent.reflect(action="reflect", session_id="s")
        assert again["engine"] is None  # the job already moved the watermark


async def test_the_same_agent_id_in_another_team_never_touches_the_session(client: Client) -> None:
    red, blue = Agent(client, identity("alice", team="red")), Agent(client, identity("alice", team="blue"))
    await red.log("s", "I prefer the red deployment checklist.", "Never deploy the red stack on Mondays.")
    await blue.log("s", "I prefer blue-green deployments for the API.")
    failed, data = await blue.reflect(action="reflect", session_id="s")
    assert not failed and data["turns_processed"] == 1
    assert [i["content"] for i in data["items"]] == ["The user prefers blue-green deployments for the API."]
    failed, compacted = await blue.reflect(action="compact", session_id="s", keep_recent=0)
    assert compacted["compacted"] == 1 and "red" not in compacted["items"][0]["content"]
    failed, red_data = await red.reflect(action="reflect", session_id="s")
    assert red_data["turns_processed"] == 2 and red_data["updated_ids"] == []
    failed, red_turns = await red.crud(action="list", filters={"session_id": "s", "layer": "session"})
    assert not any(t["compacted"] for t in red_turns["items"])


async def test_a_turn_that_reuses_a_deleted_turns_position_is_still_reflected(agent: Agent) -> None:
    first = await agent.log("s", "I prefer oat milk in coffee.", "I like long walks by the river.")
    await agent.reflect(action="reflect", session_id="s")
    failed, _ = await agent.crud(action="delete", items=[{"id": first["items"][-1]["id"]}])
    assert not failed
    await agent.log("s", "I prefer trains over planes for trips under 800 km.")
    failed, data = await agent.reflect(action="reflect", session_id="s")
    assert data["turns_processed"] == 1 and "trains over planes" in data["items"][0]["content"]


@pytest.mark.parametrize("answer", [types.ErrorData(code=-1, message="KeyError: the user declined"),
                                    types.ErrorData(code=-32001, message="timed out")])
async def test_a_failed_sampling_request_is_explained_without_internals(settings, answer) -> None:  # noqa: ANN001
    async def refuse(context, params):  # noqa: ANN001, ANN202
        return answer

    async with Client(create_server(settings), mode="legacy", sampling_callback=refuse) as client:
        agent = Agent(client)
        await agent.log("s", "Never deploy on weekends, I run the on-call rota then.")
        failed, data = await agent.reflect(action="reflect", session_id="s")
    assert not failed and data["engine"] == "extractive"
    # was "sampling failed (MCPError)": an exception class name, and never the client's own text
    assert data["fallback_reason"] == {-1: "sampling failed: the client answered with error -1",
                                       -32001: "sampling failed: the client did not answer within 60 s"}[answer.code]


async def _reflect_on_model_answer(client: Client) -> dict:
    """Log one turn and reflect it through a client whose model answers unusably: extraction runs."""
    agent = Agent(client)
    await agent.log("s", "Never deploy on weekends, I run the on-call rota then.")
    failed, data = await agent.reflect(action="reflect", session_id="s")
    assert not failed and data["engine"] == "extractive"
    return data


async def test_a_model_answer_nested_too_deep_falls_back_to_extraction(settings) -> None:  # noqa: ANN001
    # json.loads raises RecursionError (not ValueError) past ~1,000 levels: this was INTERNAL
    answer = '{"facts": ' + "[" * 100_000 + "]" * 100_000 + "}"
    async with Client(create_server(settings), mode="legacy", sampling_callback=_sampling_answer(answer)) as client:
        data = await _reflect_on_model_answer(client)
    assert data["fallback_reason"] == "the model's answer was not valid JSON"


async def test_a_model_answer_escaping_a_lone_surrogate_falls_back_to_extraction(settings) -> None:  # noqa: ANN001
    # valid JSON text over any transport, but "\ud800" decodes to text SQLite cannot store: this was INTERNAL
    answer = '{"facts": ["The user likes \\ud800 tea."]}'
    async with Client(create_server(settings), mode="legacy", sampling_callback=_sampling_answer(answer)) as client:
        data = await _reflect_on_model_answer(client)
        assert data["fallback_reason"] == "an item of 'facts' in the model's answer had no usable content"
        failed, data = await Agent(client).crud(action="list", limit=100)
        assert not failed and all("tea" not in e["content"] for e in data["items"])
