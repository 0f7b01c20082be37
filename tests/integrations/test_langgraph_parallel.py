"""Issue 23 item 3: parallel LangGraph branches writing one (namespace, key) leave one item.

A real compiled graph (three nodes of one step, each `runtime.store.put` of the same key with its
own value), run 20 times against a real `agent-memory serve` over stdio and over HTTP, on SQLite
and on PostgreSQL (one server per store and transport, shared by the 20 runs)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agent_memory.integrations.langgraph import KEY_TAG, MARKER_TAG, AgentMemoryStore
from agent_memory.integrations.mcp_link import MemoryLink
from tests.e2e.servers import agent_memory_command, http_server, server_env, token
from tests.integrations.conftest import ALICE

REPETITIONS = 20
WRITERS = ("first", "second", "third")
FAST = {"MEMORY_VECTOR_BACKEND": "none", "MEMORY_RATE_LIMIT_PER_SECOND": "0"}


class State(TypedDict):
    user: str


def parallel_writers(store: AgentMemoryStore):  # type: ignore[no-untyped-def]
    """START fans out to three nodes that run in the same step; each puts ('profile', user) 'summary'."""
    graph = StateGraph(State)
    for name in WRITERS:
        def write(state: State, runtime: Runtime, name: str = name) -> dict:
            runtime.store.put(("profile", state["user"]), "summary", {"summary": f"written by {name}"})
            return {}

        graph.add_node(name, write)
        graph.add_edge(START, name)
        graph.add_edge(name, END)
    return graph.compile(store=store)


@pytest.fixture(params=["stdio", "http"])
def link(request: pytest.FixtureRequest, store_backend: str, tmp_path: Path) -> Iterator[MemoryLink]:
    env = dict(FAST)
    if store_backend == "postgres":
        env.update(MEMORY_BACKEND="postgres", MEMORY_POSTGRES_URL=request.getfixturevalue("postgres_url"))
    with ExitStack() as stack:
        if request.param == "stdio":
            made = MemoryLink.stdio(ALICE, command=agent_memory_command(), env=server_env(tmp_path / "data", **env))
        else:
            url = stack.enter_context(http_server(tmp_path / "data", **env))
            made = MemoryLink.http(url, token(ALICE["agent_id"], ALICE["system_type"], ALICE["team"]))
        stack.callback(made.close_sync)
        yield made


@pytest.fixture(params=["sqlite", "postgres"])
def store_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_three_parallel_branches_putting_one_key_leave_exactly_one_item_holding_one_writers_value(
        link: MemoryLink) -> None:
    store = AgentMemoryStore(link)
    app = parallel_writers(store)
    values = [{"summary": f"written by {name}"} for name in WRITERS]
    for run in range(REPETITIONS):
        user = f"dana-{run % 10}"  # runs 0-9 race to create the item, runs 10-19 to update it
        app.invoke({"user": user})
        items = store.search(("profile", user))
        assert [item.key for item in items] == ["summary"], (run, items)
        assert items[0].value in values
        assert store.get(("profile", user), "summary").value == items[0].value  # type: ignore[union-attr]
        scope, namespace = store.area(("profile", user))
        held = link.call_sync("memory_crud", {"action": "list", "scope": scope, "namespace": namespace,
                                              "filters": {"tags": [MARKER_TAG, KEY_TAG + "summary"]}})
        assert len(held["items"]) == 1, (run, held["items"])
        assert held["items"][0]["version"] == (3 if run < 10 else 6)
