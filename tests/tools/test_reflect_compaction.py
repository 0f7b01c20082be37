"""memory_reflect compact through the MCP client: one summary per chunk of turns, each naming the
turns it covers, details of old turns still reachable, concurrent compactions, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import Client

from agent_memory.config import Settings
from agent_memory.storage.sqlite.sessions import SqliteSessionStore
from agent_memory.tools.server import create_server
from tests.conftest import Agent, audit_rows, make_settings, scalar
from tests.tools.test_crud_concurrency import two_servers

pytestmark = pytest.mark.anyio


def _turn(text: str, day: int, name: str = "Ana", minute: int = 0) -> dict:
    return {"role": "user", "name": name, "content": text, "at": f"2026-01-{day:02d}T10:{minute:02d}:00Z"}


async def _session(agent: Agent, session_id: str) -> list[dict]:
    failed, data = await agent.crud(action="list", filters={"session_id": session_id}, limit=100)
    assert not failed, data
    return data["items"]


def _covers(summary: dict) -> range:
    tag = next(t for t in summary["tags"] if t.startswith("turns:"))
    first, last = tag[len("turns:"):].split("-")
    return range(int(first), int(last) + 1)


def _session_store(settings: Settings) -> type:
    """The session store class of the backend `settings` name (to make the other server act
    between this one's reads)."""
    if settings.backend == "postgres":
        from agent_memory.storage.postgres.sessions import PostgresSessionStore

        return PostgresSessionStore
    return SqliteSessionStore


def _compactions(settings: Settings) -> list[dict]:
    return [{**dict(r), "details": json.loads(r["details"])} for r in audit_rows(settings)
            if r["tool"] == "memory_reflect" and r["action"] == "compact"]


DAY1 = ["I booked room 101 at the Hotel Miramar in Porto for the first week of June.",
        "Breakfast at the Miramar is served from 7 until 10 on the roof terrace.",
        "We could rent bikes from Velo Norte, they charge 15 euros a day."]
DAY2 = ["The flight LX2041 to Geneva leaves from gate B4 at 06:40 in the morning.",
        "Remember that Geneva airport has a free train ticket for arriving passengers.",
        "My cousin Lukas lives in Carouge and offered to show us the old town.",
        "Lukas recommended the fondue at Café du Soleil, about 30 francs each.",
        "The return flight LX2048 lands in Porto at 21:15 on Sunday."]


async def test_each_chunk_summary_names_the_turns_it_covers_and_keeps_their_details(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "d", compaction_threshold_chars=0)
    async with Client(create_server(settings), mode="legacy") as client:
        agent = Agent(client)
        # Three conversations on three days: 3 turns, 5 turns, then 2 recent ones.
        recent = [_turn(f"Dinner at Chez Marcel costs {30 + n} francs.", 3, minute=n) for n in range(2)]
        logged = await agent.log("trip", *[_turn(t, 1, minute=n) for n, t in enumerate(DAY1)],
                                 *[_turn(t, 2, "Ben" if n % 2 else "Ana", n) for n, t in enumerate(DAY2)], *recent)
        turn_ids = [t["id"] for t in logged["items"]]
        failed, data = await agent.reflect(action="compact", session_id="trip", keep_recent=2)
        assert not failed, data
        summaries = data["items"]
        # A day's gap starts a new chunk; a longer conversation is split evenly, at most 2 turns a chunk.
        assert [list(_covers(s)) for s in summaries] == [[1], [2, 3], [4], [5, 6], [7, 8]]
        assert data["compacted"] == 8 and data["summary_id"] == summaries[-1]["id"]
        for summary in summaries:
            assert summary["tags"][0] == "compaction" and len(summary["tags"]) == 2
            assert summary["layer"] == "session" and summary["source"] == "reflection"
            assert summary["session_id"] == "trip" and len(summary["content"]) <= 100  # the turns average < 100
        assert [s["content"].splitlines()[0] for s in summaries] == [
            "Turn 1 (2026-01-01):", "Turns 2-3 (2026-01-01):", "Turn 4 (2026-01-02):", "Turns 5-6 (2026-01-02):",
            "Turns 7-8 (2026-01-02):"]
        assert [s["created_at"][:16] for s in summaries] == [
            "2026-01-01T10:00", "2026-01-01T10:02", "2026-01-02T10:00", "2026-01-02T10:02", "2026-01-02T10:04"]
        # Each summary keeps the details of its own turns (names, numbers, places), and only those.
        details = ["101", "7", "15", "LX2041", "Geneva", "Lukas", "30", "LX2048"]
        for n, detail in enumerate(details, 1):
            assert detail in next(s for s in summaries if n in _covers(s))["content"], (detail, summaries)
        assert "Ben:" in summaries[3]["content"] and "Porto" not in summaries[1]["content"]
        listed = {t["id"]: t for t in await _session(agent, "trip")}
        assert set(listed) == set(turn_ids) | {s["id"] for s in summaries}
        assert [listed[i]["compacted"] for i in turn_ids] == [True] * 8 + [False] * 2
        # Positions continue from the earlier compaction.
        await agent.log("trip", *[_turn(f"Museum ticket number {n} for the Louvre.", 9, minute=n) for n in range(4)])
        failed, again = await agent.reflect(action="compact", session_id="trip", keep_recent=0)
        assert not failed and again["compacted"] == 6
        assert [list(_covers(s)) for s in again["items"]] == [[9, 10], [11, 12], [13, 14]]
        assert again["items"][0]["content"].startswith("Turns 9-10 (2026-01-03):")
    # One audit event per compaction, naming the last summary.
    events = _compactions(settings)
    assert [(e["entry_id"], e["details"]["compacted"], e["details"]["summaries"]) for e in events] == [
        (summaries[-1]["id"], 8, 5), (again["summary_id"], 6, 3)]


async def test_a_detail_of_an_early_turn_is_still_retrieved_after_compaction(agent: Agent) -> None:
    chatter = ["Haha, that's so true!", "Wow, sounds great, Ana!", "Anyway, how was your week?",
               "Pretty good, thanks for asking.", "I watched a documentary about whales yesterday evening."]
    turns = [_turn(chatter[n % len(chatter)], 5, "Ana" if n % 2 else "Ben", n) for n in range(40)]
    turns[2] = _turn("My sister Ingrid moved to Tromsø in March 2019 to teach chemistry at the university.", 5,
                     "Ben", 2)
    await agent.log("chat", *turns)
    failed, data = await agent.reflect(action="compact", session_id="chat")  # keeps the default 10
    assert not failed and data["compacted"] == 30
    assert all(len(s["content"]) <= 800 for s in data["items"])
    found = await agent.client.call_tool("memory_retrieve", {"query": "Where did Ingrid move to?", "limit": 10})
    items = found.structured_content["items"]
    assert items and "compaction" in items[0]["tags"] and 3 in _covers(items[0])
    for detail in ("Ingrid", "Tromsø", "March 2019", "chemistry"):
        assert detail in items[0]["content"], items[0]["content"]
    assert all(not i["content"].startswith("My sister") for i in items)  # the turn itself is compacted


async def test_a_session_past_the_threshold_compacts_itself_into_chunk_summaries(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "d", compaction_threshold_chars=300, compaction_keep_recent=2)
    async with Client(create_server(settings), mode="legacy") as client:
        agent = Agent(client)
        await agent.log("s", *[f"Note number {n}: the quick brown fox jumps." for n in range(5)])
        second = await agent.log("s", *[f"Note number {n}: the lazy dog sleeps all day." for n in range(5, 10)])
        assert second["compacted"] == 8
        summaries = [e for e in await _session(agent, "s") if "compaction" in e["tags"]]
    assert sorted(n for s in summaries for n in _covers(s)) == list(range(1, 9))
    assert second["summary_id"] == max(summaries, key=lambda s: _covers(s).start)["id"]


async def test_concurrent_compactions_fold_every_turn_exactly_once(settings: Settings, mode: str) -> None:
    async with two_servers(settings, mode) as (a, b):
        await a.log("s", *[_turn(f"Fact number {n}: the locker code is {1000 + n}.", 1, minute=n) for n in range(30)])
        results: list[dict] = []

        async def compact(agent: Agent, keep: int) -> None:
            failed, data = await agent.reflect(action="compact", session_id="s", keep_recent=keep)
            assert not failed, data
            results.append(data)

        async with anyio.create_task_group() as tg:
            tg.start_soon(compact, a, 10)
            tg.start_soon(compact, b, 0)
        listed = await _session(a, "s")
    summaries = [e for e in listed if "compaction" in e["tags"]]
    covered = sorted(n for s in summaries for n in _covers(s))
    assert covered == list(range(1, len(covered) + 1))  # no turn in two summaries, no gap
    assert sum(r["compacted"] for r in results) == len(covered) == sum(t["compacted"] for t in listed)
    assert len(covered) in (20, 30)
    assert sum(e["details"]["compacted"] for e in _compactions(settings)) == len(covered)


@pytest.mark.parametrize("others_keep", [8, 0])
async def test_turns_another_process_compacted_meanwhile_are_left_to_it(
        settings: Settings, monkeypatch: pytest.MonkeyPatch, others_keep: int) -> None:
    """The other server compacts after this one has read the session and numbered its turns, just
    before this one writes: this one folds only what is left (others_keep 8: turns 13-20), or nothing."""
    store_class = _session_store(settings)
    original = store_class.compacted_through
    state = {"calls": 0, "other": None}

    async def meanwhile(store: SqliteSessionStore, key):  # noqa: ANN001, ANN202
        result = await original(store, key)
        state["calls"] += 1
        if state["calls"] == 2 and state["other"] is not None:  # this server's second read: the other one runs
            other, state["other"] = state["other"], None
            failed, data = await other.reflect(action="compact", session_id="s", keep_recent=others_keep)
            assert not failed and data["compacted"] == 20 - others_keep
            state["first"] = data
        return result

    async with two_servers(settings, "legacy") as (a, b):
        await a.log("s", *[_turn(f"Fact number {n}: the locker code is {1000 + n}.", 1, minute=n) for n in range(20)])
        monkeypatch.setattr(store_class, "compacted_through", meanwhile)
        state["other"] = b
        failed, data = await a.reflect(action="compact", session_id="s", keep_recent=0)
        assert not failed, data
        listed = await _session(a, "s")
    first = state["first"]
    assert first["compacted"] == 20 - others_keep and data["compacted"] == others_keep
    assert [n for s in first["items"] + data["items"] for n in _covers(s)] == list(range(1, 21))
    if others_keep:
        assert data["items"][0]["content"].startswith("Turns 13-")
        assert "1012" in data["items"][0]["content"] and "1011" not in data["items"][0]["content"]
    else:
        assert data["items"] == [] and data["summary_id"] is None
    assert all(t["compacted"] for t in listed if "compaction" not in t["tags"])
    assert len([t for t in listed if "compaction" in t["tags"]]) == len(first["items"]) + len(data["items"])
    assert [e["details"]["compacted"] for e in _compactions(settings)] == [20 - others_keep, others_keep][
        : 1 + bool(others_keep)]


async def test_bad_compaction_input_is_refused_and_nothing_is_written(agent: Agent, settings: Settings) -> None:
    await agent.log("s", *[f"Turn {n}: I prefer tea number {n}." for n in range(4)])
    for arguments in ({"keep_recent": -1}, {"keep_recent": 10_001}, {"keep_recent": "3"}, {"keep_recent": 1.5},
                      {"session_id": "has space"}, {"session_id": ""}, {"turns": [{"role": "user", "content": "x"}]},
                      {"facts": ["x"]}):
        failed, data = await agent.reflect(**{"action": "compact", "session_id": "s", **arguments})
        assert failed and data["errors"][0]["code"] == "INVALID_PARAMS", (arguments, data)
    for arguments in ({"action": "log", "turns": [{"role": "user", "content": "x"}]}, {"action": "reflect"}):
        failed, data = await agent.reflect(session_id="s", keep_recent=1, **arguments)
        assert failed and data["errors"][0]["details"]["field"] == "keep_recent"
    listed = await _session(agent, "s")
    assert len(listed) == 4 and not any(t["compacted"] or "compaction" in t["tags"] for t in listed)
    assert _compactions(settings) == []
    assert scalar(settings, "SELECT COUNT(*) FROM entries WHERE source = 'reflection'") == 0
