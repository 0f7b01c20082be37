"""memory_retrieve on a server without a vector index (`vector_backend = none`): every mode is
answered by keyword, in one read, as mode keyword is; `degraded` says meaning is switched off."""

from __future__ import annotations

import pytest
from structlog.contextvars import merge_contextvars
from structlog.testing import capture_logs

from agent_memory.config import Settings
from tests.conftest import Agent, scalar
from tests.tools.test_retrieve import retrieve

pytestmark = pytest.mark.anyio

SWITCHED_OFF = "semantic search is switched off (vector_backend = none)"
TEXTS = ("The deploy script needs the --fast flag on staging.", "Staging deploys wait for the smoke tests.",
         "Lunch on Fridays is at the pizza place.")


async def test_default_retrieve_is_the_keyword_search_and_reads_nothing_for_meaning(agent: Agent,
                                                                                   settings: Settings) -> None:
    ids = [(await agent.create(text))["id"] for text in TEXTS]
    # Without an index nothing drains the vector outbox: every entry written waits there for good.
    assert scalar(settings, "SELECT COUNT(*) FROM vector_outbox") >= len(ids)
    with capture_logs(processors=[merge_contextvars]) as logs:
        _, keyword = await retrieve(agent, query="staging deploy", mode="keyword")
        failed, default = await retrieve(agent, query="staging deploy")
    assert not failed and default["degraded"] == SWITCHED_OFF and keyword["degraded"] is None
    assert [i["id"] for i in default["items"]] == [i["id"] for i in keyword["items"]]
    assert set(ids[:2]) == {i["id"] for i in default["items"]}
    # The default call read what mode keyword reads (the partitions and the keyword search, in one
    # trip), not the entries waiting for the index as well: those only serve a fusion with a search by
    # meaning that cannot happen here (reading 1,000 of them made the call 35 ms slower).
    stages = [set(e["stages_ms"]) for e in logs if e["event"] == "tool_invocation"]
    assert stages[1] == stages[0] and "partitions" not in stages[1]


async def test_mode_semantic_falls_back_to_keywords_or_says_why(agent: Agent) -> None:
    entry = await agent.create(TEXTS[0])
    failed, data = await retrieve(agent, query="staging flag", mode="semantic")
    assert not failed and data["degraded"] == SWITCHED_OFF and [i["id"] for i in data["items"]] == [entry["id"]]
    failed, data = await retrieve(agent, query="where do we eat?", mode="semantic")
    [error] = data["errors"]
    assert failed and error["details"] == {"reason": "semantic_unavailable"} and SWITCHED_OFF in error["message"]


async def test_nothing_readable_is_an_empty_answer_not_a_degraded_one(agent: Agent) -> None:
    for mode in ("hybrid", "semantic", "keyword"):
        failed, data = await retrieve(agent, query="anything at all", mode=mode)
        assert not failed and data["items"] == [] and data["degraded"] is None
