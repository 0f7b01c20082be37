"""LangGraph's BaseStore on agent-memory: the real langgraph package, real servers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, Item, PutOp, SearchItem, SearchOp

from agent_memory.integrations.langgraph import AgentMemoryStore
from agent_memory.integrations.mcp_link import MemoryLink, MemoryPermissionError, MemoryToolError
from agent_memory.integrations.store_terms import decode_label, encode_label
from tests.integrations.conftest import ALICE, BOB, RecordingLink, wait_semantic

pytestmark = pytest.mark.anyio


def in_thread(fn: Callable[[], Any]) -> Any:
    """Run `fn` in a fresh thread with no event loop (as a sync LangGraph graph would) and return
    its result or raise its exception."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "the sync store call did not return"
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_labels_round_trip_through_server_namespace_segments() -> None:
    for label in ("user-1", "user@example.com", "a/b", "café", "x y", "_.-"[0] + "-"):
        encoded = encode_label(label)
        assert set(encoded) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
        assert decode_label(encoded) == label
    with pytest.raises(ValueError, match="too long"):
        encode_label("x" * 129)
    assert decode_label("not.hex") == "not.hex"  # a segment the store did not write reads as it is


def test_sync_put_get_delete_from_a_thread_without_an_event_loop(in_process: Callable[[dict], RecordingLink]) -> None:
    store = AgentMemoryStore(in_process(ALICE))
    assert isinstance(store, BaseStore)
    ns = ("memories", "user@example")
    in_thread(lambda: store.put(ns, "coffee", {"memory": "Likes dark roast", "strength": 3}))
    item = in_thread(lambda: store.get(ns, "coffee"))
    assert isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == (ns, "coffee", {"memory": "Likes dark roast", "strength": 3})
    created = item.created_at

    in_thread(lambda: store.put(ns, "coffee", {"memory": "Switched to tea", "strength": 1}))
    again = in_thread(lambda: store.get(ns, "coffee"))
    assert again.value == {"memory": "Switched to tea", "strength": 1}
    assert again.created_at == created and again.updated_at > created
    assert in_thread(lambda: store.get(ns, "tea")) is None
    assert in_thread(lambda: store.get(ns, "k" * 200)) is None  # longer than any stored key
    assert in_thread(lambda: store.get(("memories", "someone-else"), "coffee")) is None

    in_thread(lambda: store.delete(ns, "coffee"))
    assert in_thread(lambda: store.get(ns, "coffee")) is None
    in_thread(lambda: store.delete(ns, "coffee"))  # deleting a missing key is not an error


async def test_namespace_tuples_map_onto_scope_and_namespace(in_process: Callable[[dict], RecordingLink]) -> None:
    alice, bob = in_process(ALICE), in_process(BOB)
    alice_store, bob_store = AgentMemoryStore(alice), AgentMemoryStore(bob)
    await alice_store.aput(("prefs",), "units", {"value": "metric"})
    await bob_store.aput(("team", "red", "runbooks"), "restart", {"steps": "queue first"})

    mine = await alice.call("memory_crud", {"action": "list", "namespace": "alice/prefs"})
    assert [(e["scope"], e["namespace"], e["owner_agent_id"]) for e in mine["items"]] == [
        ("agent", "alice/prefs", "alice")]
    team = await alice.call("memory_crud", {"action": "list", "scope": "team", "namespace": "red/runbooks"})
    assert [(e["scope"], e["layer"], e["content"]) for e in team["items"]] == [
        ("team", "long_term", '{"steps":"queue first"}')]
    # the teammate reads it through the store; agent-scope namespaces stay private
    item = await alice_store.aget(("team", "red", "runbooks"), "restart")
    assert item is not None and item.namespace == ("team", "red", "runbooks")
    assert await bob_store.aget(("prefs",), "units") is None
    assert await bob_store.alist_namespaces() == []
    assert await alice_store.alist_namespaces() == [("prefs",)]


async def test_search_lists_by_prefix_and_filters_on_value_fields(in_process: Callable[[dict], RecordingLink]) -> None:
    store = AgentMemoryStore(in_process(ALICE))
    await store.aput(("docs", "u1"), "a", {"kind": "report", "pages": 3, "meta": {"lang": "en"}})
    await store.aput(("docs", "u1"), "b", {"kind": "memo", "pages": 12, "meta": {"lang": "fr"}})
    await store.aput(("docs", "u1", "drafts"), "c", {"kind": "report", "pages": 40, "meta": {"lang": "en"}})
    await store.aput(("docs", "u2"), "d", {"kind": "report", "pages": 1, "meta": {"lang": "de"}})
    await store.aput(("other",), "e", {"kind": "report", "pages": 7})

    def keys(items: list[SearchItem]) -> list[str]:
        return sorted(i.key for i in items)

    # entries in the same namespaces that the store did not write are not items
    link = store.link
    await link.call("memory_crud", {"action": "create", "namespace": "alice/docs/u1",
                                    "items": [{"content": "a note", "tags": ["langgraph"]}, {"content": "plain"}]})
    assert keys(await store.asearch(("docs", "u1"))) == ["a", "b", "c"]
    assert keys(await store.asearch(("docs",))) == ["a", "b", "c", "d"]
    assert keys(await store.asearch(())) == ["a", "b", "c", "d", "e"]
    assert keys(await store.asearch(("docs",), filter={"kind": "report"})) == ["a", "c", "d"]
    assert keys(await store.asearch(("docs",), filter={"pages": {"$gte": 3, "$lt": 40}})) == ["a", "b"]
    assert keys(await store.asearch(("docs",), filter={"meta": {"lang": "en"}, "kind": {"$ne": "memo"}})) == [
        "a", "c"]
    newest_first = await store.asearch(("docs",), limit=2)
    assert [i.key for i in newest_first] == ["d", "c"] and all(i.score is None for i in newest_first)
    assert [i.key for i in await store.asearch(("docs",), limit=2, offset=2)] == ["b", "a"]
    assert await store.alist_namespaces(prefix=("docs",), max_depth=2) == [("docs", "u1"), ("docs", "u2")]
    assert await store.alist_namespaces(suffix=("drafts",)) == [("docs", "u1", "drafts")]
    with pytest.raises(ValueError, match="unsupported filter operator"):
        await store.asearch(("docs",), filter={"pages": {"$in": [1, 2]}})


async def test_batches_beyond_the_bulk_limit_are_split_into_requests_of_ten(
        in_process: Callable[[dict], RecordingLink]) -> None:
    link = in_process(ALICE)
    store = AgentMemoryStore(link)
    puts = [PutOp(("bulk",), f"k{i}", {"n": i}) for i in range(23)]
    puts.append(PutOp(("bulk",), "k0", {"n": 100}))  # the last write of a key wins
    assert await store.abatch(puts) == [None] * 24
    creates = [args for tool, args in link.calls if args.get("action") == "create"]
    assert [len(args["items"]) for args in creates] == [10, 10, 3]

    link.calls.clear()
    results = store.batch([GetOp(("bulk",), "k0"), SearchOp(("bulk",), filter={"n": {"$gt": 20}}),
                           *[PutOp(("bulk",), f"k{i}", None) for i in range(12)]])
    assert results[0].value == {"n": 100}  # reads see the store before the batch's writes
    assert sorted(i.key for i in results[1]) == ["k0", "k21", "k22"]
    deletes = [args for tool, args in link.calls if args.get("action") == "delete"]
    assert [len(args["items"]) for args in deletes] == [10, 2]
    assert sorted(i.key for i in await store.asearch(("bulk",), limit=50)) == [f"k{i}" for i in range(12, 23)]


async def test_refusals_surface_as_exceptions_with_the_spec_code(in_process: Callable[[dict], RecordingLink]) -> None:
    store = AgentMemoryStore(in_process(ALICE))  # sys1: may read team memory, not write it
    with pytest.raises(MemoryPermissionError) as denied:
        await store.aput(("team", "red", "kb"), "k", {"x": 1})
    assert denied.value.code == "FORBIDDEN" and isinstance(denied.value, PermissionError)
    with pytest.raises(MemoryPermissionError):
        in_thread(lambda: store.get(("team", "blue", "kb"), "k"))  # another team's memory
    with pytest.raises(MemoryToolError) as too_big:
        await store.aput(("big",), "k", {"text": "x" * 40_000})
    assert too_big.value.code == "INVALID_PARAMS"
    with pytest.raises(InvalidNamespaceError):
        await store.aput(("team",), "k", {"x": 1})
    with pytest.raises(InvalidNamespaceError, match="too long"):
        await store.aput(("é" * 30,), "k", {"x": 1})
    with pytest.raises(ValueError, match="keys are at most 121 characters"):
        await store.aput(("long",), "k" * 122, {"x": 1})
    with pytest.raises(NotImplementedError, match="TTL"):
        await store.aput(("ttl",), "k", {"x": 1}, ttl=5)


async def test_semantic_search_over_stdio_ranks_by_meaning(stdio_link: Callable[[dict], MemoryLink]) -> None:
    store = AgentMemoryStore(stdio_link(ALICE))
    ns = ("memories", "u1")
    await store.aput(ns, "pet", {"memory": "The user's cat is named Miso."})
    await store.aput(ns, "food", {"memory": "The user is allergic to peanuts."})
    await store.aput(("memories", "u2"), "pet", {"memory": "This user has a dog called Rex."})
    await wait_semantic(store.link)
    found = await store.asearch(ns, query="what animal lives with the user?")
    assert [i.key for i in found][0] == "pet" and {i.namespace for i in found} == {ns}
    assert all(isinstance(i, SearchItem) and i.score is not None for i in found)
    assert found[0].value == {"memory": "The user's cat is named Miso."}
    everywhere = in_thread(lambda: store.search(("memories",), query="pets", limit=5))
    assert {(i.namespace, i.key) for i in everywhere} >= {(ns, "pet"), (("memories", "u2"), "pet")}
    assert [i.key for i in await store.asearch(ns, query="allergy", filter={"memory": {"$ne": "x"}}, limit=1)] == [
        "food"]
    await store.aclose()


async def test_an_async_graph_reads_and_writes_through_the_store(in_process: Callable[[dict], RecordingLink]) -> None:
    class State(TypedDict):
        user: str
        said: str
        known: list[str]

    async def remember(state: State, runtime: Runtime) -> dict:
        await runtime.store.aput(("memories", state["user"]), f"fact-{len(state['said'])}", {"fact": state["said"]})
        return {}

    async def recall(state: State, runtime: Runtime) -> dict:
        return {"known": [i.value["fact"] for i in await runtime.store.asearch(("memories", state["user"]))]}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    app = graph.compile(store=AgentMemoryStore(in_process(ALICE)))
    await app.ainvoke({"user": "dana", "said": "likes tea", "known": []})
    result = await app.ainvoke({"user": "dana", "said": "works nights", "known": []})
    assert result["known"] == ["works nights", "likes tea"]
