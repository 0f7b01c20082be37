"""Projects never mix through the model's own writes (issue 36, item 1): a server launched in a
project (`project`, which `setup` writes as `--project auto`) writes what the model saves without a
namespace into `<agent>/<project>` and recalls the project plus agent- and team-wide memory, never
another project's; on both stores, through real MCP client sessions, two servers on one store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client

from agent_memory.config import Settings
from agent_memory.contracts.retrieve import MemoryRetrieveResult
from agent_memory.tools.server import create_server
from tests.conftest import Agent, identity, store_settings

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def working_in(request: pytest.FixtureRequest, data: Path, backend: str, project: str) -> AsyncIterator[Client]:
    settings = store_settings(request, data, backend, project=project)
    async with Client(create_server(settings)) as client:
        yield client


async def recalled(agent: Agent, query: str, **arguments: object) -> str:
    failed, data = await agent.call("memory_retrieve", MemoryRetrieveResult, {"query": query, "min_score": 0,
                                                                              **arguments})
    assert not failed, data
    return "\n".join(item["content"] for item in data["items"])


async def test_what_the_model_saves_in_one_project_is_never_recalled_in_another(
        settings: Settings, store_backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with working_in(request, data, store_backend, "alpha") as client:
        alice = Agent(client)
        decision = await alice.create("We decided to use Redis streams for the order queue.")
        assert decision["namespace"] == "alice/alpha"
        preference = await alice.create("I prefer short commit messages in the imperative mood.", namespace="alice")
        lead = alice.as_(identity("alice", "sys3"))  # a team lead's rule for the whole team, in the team's root
        await lead.create("The team never merges without a green CI run.", scope="team", namespace="red",
                          layer="meta")
        await lead.create("The order service team-wide: alpha runs on Kubernetes.", scope="team", namespace="red/alpha",
                          layer="long_term")
        await alice.log("s-1", "Redis streams partition the order queue by customer id.")
        failed, listed = await alice.crud(action="list")
        assert not failed and {i["namespace"] for i in listed["items"]} == {"alice/alpha"}
        assert "Redis streams" in await recalled(alice, "Redis streams order queue")
    async with working_in(request, data, store_backend, "beta") as client:
        alice = Agent(client)
        assert "Redis" not in await recalled(alice, "Redis streams order queue")  # nor the session's turn
        assert "Kubernetes" not in await recalled(alice, "alpha Kubernetes order service")
        assert preference["content"] in await recalled(alice, "commit messages imperative mood")
        assert "green CI" in await recalled(alice, "merge CI run")
        failed, listed = await alice.crud(action="list")
        assert not failed and listed["items"] == []  # beta's own namespace holds nothing yet
        # Naming the namespace reaches it from anywhere the caller may read, as ever.
        assert "Redis streams" in await recalled(alice, "Redis streams order queue", namespaces=["alice/alpha"])
        # A claimed identity in _meta works in the server's project too.
        assert "Redis" not in await recalled(alice.as_(identity("alice", "sys3")), "Redis streams order queue")


async def test_without_a_project_the_server_reads_and_writes_as_before(
        settings: Settings, agent: Agent, store_backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    async with working_in(request, settings.data_path, store_backend, "alpha") as client:
        await Agent(client).create("We decided to use Redis streams for the order queue.")
    assert (await agent.create("The API gateway is Envoy."))["namespace"] == "alice"
    assert "Redis streams" in await recalled(agent, "Redis streams order queue")


async def test_the_instructions_and_the_remember_prompt_say_where_memory_lands(
        settings: Settings, store_backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    async with working_in(request, tmp_path / "data", store_backend, "alpha") as client:
        text = " ".join((client.instructions or "").split())
        assert "project alpha" in text and "(alice/alpha)" in text and 'namespace "alice"' in text
        assert 'scope team, namespace "red"' in text
        prompt = await client.get_prompt("remember", {"what": "I like tabs"})
        said = prompt.messages[0].content.text
        assert "this project (alice/alpha)" in said and '"namespace": "alice"' in said
    async with Client(create_server(settings)) as client:  # no project: neither says a word about one
        assert "project" not in (client.instructions or "").lower()


async def test_a_session_logged_and_reflected_without_a_namespace_stays_in_the_project(
        settings: Settings, store_backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    async with working_in(request, tmp_path / "data", store_backend, "alpha") as client:
        alice = Agent(client)
        logged = await alice.log("s-2", "We decided to pin Python 3.12 for the workers.")
        assert {i["namespace"] for i in logged["items"]} == {"alice/alpha"}
        failed, reflected = await alice.reflect(action="reflect", session_id="s-2")
        assert not failed, reflected
        assert reflected["items"] and {i["namespace"] for i in reflected["items"]} == {"alice/alpha"}
        failed, refused = await alice.reflect(action="log", session_id="s-3", namespace="bob/alpha",
                                              turns=[{"role": "user", "content": "x"}])
        assert failed and refused["errors"][0]["code"] == "FORBIDDEN"
