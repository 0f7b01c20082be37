"""Nothing said in a session is silently forgotten (issue 37, item 1): before session turns are
pruned (their retention, or a namespace over its limit) the session is kept, distilled by
reflection and digested into long-term memory word for word, and a session that cannot be kept
keeps its turns. On both stores, through a real MCP client session, the operator's `prune` and
the server's own pruning job."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
import structlog
from mcp import Client

from agent_memory.application.maintenance import prune
from agent_memory.bootstrap import open_records, session_keeper
from agent_memory.config import Settings
from agent_memory.contracts.retrieve import MemoryRetrieveResult
from agent_memory.core.memories.pruning import PruneService, Retention
from agent_memory.core.model.clock import utc_now
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.models import Layer
from agent_memory.core.sessions.keeping import DIGEST_TAG
from agent_memory.tools.server import create_server
from tests.conftest import Agent, scalar, store_settings

pytestmark = pytest.mark.anyio  # on both stores: tests/conftest.py BOTH_STORES

SECONDS = 1 / 86_400  # retention_session_days of one second
SESSION = [
    {"role": "user", "content": "Our staging database is db-07 on port 6543; the deploy window is Thursdays "
                                "14:00 UTC."},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "thanks!"},
    {"role": "user", "content": "We decided to use PostgreSQL 16 for the ledger."},
    {"role": "tool", "content": "$ pytest tests/ledger -q\n3 failed, 12 passed in 4.2s"},
]


def expiring(settings: Settings, **overrides: object) -> Settings:
    """The same store with session turns kept for one second."""
    return replace(settings, retention_session_days=SECONDS, **overrides)


async def entries(agent: Agent, **filters: object) -> list[dict]:
    failed, data = await agent.crud(action="list", limit=100, **filters)
    assert not failed, data
    return data["items"]


async def recalled(agent: Agent, query: str) -> str:
    failed, data = await agent.call("memory_retrieve", MemoryRetrieveResult, {"query": query, "min_score": 0})
    assert not failed, data
    return "\n".join(item["content"] for item in data["items"])


async def test_turns_past_their_retention_are_distilled_and_digested_before_they_go(
        settings: Settings, agent: Agent) -> None:
    await agent.log("s-1", *SESSION)
    await anyio.sleep(1.2)
    async with open_records(expiring(settings)) as records:
        gone = await prune(records, dry_run=False)
    assert len(gone) == len(SESSION) and {v.reason for v in gone} == {"retention"}
    assert await entries(agent, layer="session") == []
    digests = [e for e in await entries(agent, layer="long_term") if DIGEST_TAG in e["tags"]]
    assert len(digests) == 1
    text = digests[0]["content"]
    assert text.startswith("Turns 1-5 (")
    for detail in ("db-07 on port 6543", "Thursdays 14:00 UTC", "PostgreSQL 16", "$ pytest tests/ledger -q"):
        assert detail in text
    assert "Noted" not in text and "thanks" not in text and "12 passed" not in text
    assert digests[0]["domain"] == "session_summary" and digests[0]["source"] == "reflection"
    assert "turns:1-5" in digests[0]["tags"] and digests[0]["session_id"] == "s-1"
    # Reflection distilled what it could first: the decision is a fact of its own.
    facts = [e["content"] for e in await entries(agent, layer="long_term") if "reflection" in e["tags"]]
    assert any("PostgreSQL 16" in fact for fact in facts)
    # The details are still found after the turns are gone.
    assert "db-07 on port 6543" in await recalled(agent, "staging database port")
    assert scalar(settings, "SELECT COUNT(*) FROM audit WHERE action = 'keep' AND outcome = 'ok'") == 1

    # Kept once: pruning again writes nothing; new turns of the same session get a digest of their own.
    async with open_records(expiring(settings)) as records:
        assert await prune(records, dry_run=False) == []
    await agent.log("s-1", "The ledger's read replica is db-08.")
    await anyio.sleep(1.2)
    async with open_records(expiring(settings)) as records:
        assert len(await prune(records, dry_run=False)) == 1
    digests = [e for e in await entries(agent, layer="long_term") if DIGEST_TAG in e["tags"]]
    assert sorted(tag for e in digests for tag in e["tags"] if tag.startswith("turns:")) == ["turns:1-5", "turns:6-6"]


async def test_a_dry_run_lists_the_turns_and_keeps_nothing(settings: Settings, agent: Agent) -> None:
    await agent.log("s-1", *SESSION[:2])
    await anyio.sleep(1.2)
    async with open_records(expiring(settings)) as records:
        planned = await prune(records, dry_run=True)
    assert len(planned) == 2 and all(v.held is not None for v in planned)
    assert len(await entries(agent, layer="session")) == 2
    assert [e for e in await entries(agent, layer="long_term") if DIGEST_TAG in e["tags"]] == []


async def test_a_session_that_cannot_be_kept_keeps_its_turns_and_says_so(settings: Settings, agent: Agent) -> None:
    await agent.log("s-1", *SESSION)
    await agent.create("An ordinary working note.", layer="working")
    await anyio.sleep(1.2)
    kept_settings = expiring(settings, retention_working_days=SECONDS)

    class Refusing:
        """Reflection that refuses every session (as a malformed imported session would)."""

        async def reflect(self, *args: object, **kwargs: object) -> None:
            raise InvalidParams("this session cannot be reflected")

    async with open_records(kept_settings) as records:
        keeper = session_keeper(kept_settings, records.store.sessions(), Refusing())  # type: ignore[arg-type]
        pruner = PruneService(records.store.prune_store(), Retention(days={
            Layer.SESSION: SECONDS, Layer.WORKING: SECONDS}), utc_now, keeper)
        with structlog.testing.capture_logs() as logs:
            gone = await pruner.prune()
    assert [v.reason for v in gone] == ["retention"]  # the working note only
    assert len(await entries(agent, layer="session")) == len(SESSION)
    assert [(line["event"], line["session_id"], line["reason"]) for line in logs
            if line["log_level"] == "warning"] == [("session_not_kept", "s-1", "INVALID_PARAMS")]
    # Without a keeper at all, turns not kept are never pruned either.
    async with open_records(kept_settings) as records:
        bare = PruneService(records.store.prune_store(), Retention(days={Layer.SESSION: SECONDS}), utc_now)
        assert await bare.prune() == []


async def test_the_server_keeps_sessions_before_its_own_pruning_job_and_its_namespace_limit(
        store_backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    settings = store_settings(request, tmp_path / "data", store_backend, retention_session_days=SECONDS,
                              prune_interval_seconds=0.5, max_entries_per_namespace=4)
    async with Client(create_server(settings)) as client:
        agent = Agent(client)
        await agent.log("s-1", *SESSION)  # five turns: over the limit of four as soon as they are written
        deadline = time.monotonic() + 30
        while await entries(agent, layer="session") and time.monotonic() < deadline:
            await anyio.sleep(0.2)
        assert await entries(agent, layer="session") == []
        assert "db-07 on port 6543" in await recalled(agent, "staging database port")
    reasons = scalar(settings, "SELECT COUNT(*) FROM audit WHERE tool = 'pruner' AND action = 'prune'")
    assert reasons == len(SESSION)
