"""Memory domains through the MCP client on both stores: set on create and update (a bad value is
INVALID_PARAMS naming the field, null clears it), the list filter, memory_retrieve's `domains`,
what the server sets itself (reflection, compaction summaries, turns logged with a domain, the
host hooks' turns), and an export/import round trip that keeps it."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from agent_memory.bootstrap import open_app
from agent_memory.config import Settings
from agent_memory.contracts.retrieve import MemoryRetrieveResult
from agent_memory.hooks.doors import LocalDoor
from agent_memory.hooks.events import HookEvents, HookSettings
from agent_memory.hooks.transcript import Turn
from agent_memory.importers import read_lines
from agent_memory.importers.drafts import Draft
from agent_memory.projects import Project
from tests.conftest import Agent
from tests.e2e.servers import agent_memory_command, server_env

pytestmark = pytest.mark.anyio


async def listed(agent: Agent, **filters: object) -> list[dict]:
    failed, data = await agent.crud(action="list", filters=filters, limit=100)
    assert not failed, data
    return data["items"]


async def retrieve(agent: Agent, **arguments: object) -> tuple[bool, dict]:
    result = await agent.client.call_tool("memory_retrieve", {"mode": "keyword", "relative_floor": 0, **arguments})
    MemoryRetrieveResult.model_validate(result.structured_content, strict=True)
    return bool(result.is_error), result.structured_content


async def test_set_on_create_and_update_kept_by_promote_and_cleared_with_null(agent: Agent) -> None:
    pref = await agent.create("The user prefers tabs over spaces", item={"domain": "user_pref"})
    plain = await agent.create("A note without a domain")
    assert (pref["domain"], plain["domain"]) == ("user_pref", None)
    failed, data = await agent.crud(action="read", items=[{"id": pref["id"]}])
    assert not failed and data["items"][0]["domain"] == "user_pref"
    failed, data = await agent.crud(action="update", items=[{"id": plain["id"], "domain": "agent_eval"}])
    assert not failed and data["items"][0]["domain"] == "agent_eval" and data["items"][0]["version"] == 2
    failed, data = await agent.crud(action="update", items=[{"id": plain["id"], "content": "A note, edited"}])
    assert not failed and data["items"][0]["domain"] == "agent_eval"  # not sent: kept
    failed, data = await agent.crud(action="promote", items=[{"id": pref["id"], "target_scope": "agent",
                                                              "target_namespace": "alice/shared"}])
    assert not failed and data["items"][0]["domain"] == "user_pref"
    failed, data = await agent.crud(action="update", items=[{"id": plain["id"], "domain": None}])
    assert not failed and data["items"][0]["domain"] is None
    # A keyed create of a key already held updates that entry, its domain included.
    keyed = await agent.create("editor: vim", item={"key": "editor", "domain": "user_pref"})
    again = await agent.create("editor: helix", item={"key": "editor", "domain": "system_fact"})
    assert again["id"] == keyed["id"] and again["domain"] == "system_fact"


@pytest.mark.parametrize(("arguments", "field"), [
    ({"action": "create", "items": [{"content": "x", "domain": "preferences"}]}, "items[0].domain"),
    ({"action": "create", "items": [{"content": "x", "domain": 3}]}, "items[0].domain"),
    ({"action": "list", "filters": {"domain": "code"}}, "filters.domain"),
])
async def test_an_unknown_domain_is_invalid_params_naming_the_field(agent: Agent, arguments: dict,
                                                                    field: str) -> None:
    failed, data = await agent.crud(**arguments)
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS", data
    assert data["errors"][0]["details"].get("field") == field, data
    assert await listed(agent) == []  # nothing written


async def test_an_unknown_domain_on_update_fails_that_item_only(agent: Agent) -> None:
    entry = await agent.create("A note")
    failed, data = await agent.crud(action="update", items=[{"id": entry["id"], "domain": "nonsense"}])
    assert data["errors"][0]["code"] == "INVALID_PARAMS" and "domain" in data["errors"][0]["details"]["field"]
    failed, data = await agent.crud(action="read", items=[{"id": entry["id"]}])
    assert data["items"][0]["version"] == 1 and data["items"][0]["domain"] is None


async def test_list_filters_by_domain_with_pagination(agent: Agent) -> None:
    for n in range(3):
        await agent.create(f"code fact {n}", item={"domain": "code_context"})
    await agent.create("a preference", item={"domain": "user_pref"})
    await agent.create("unclassified")
    assert {e["content"] for e in await listed(agent, domain="user_pref")} == {"a preference"}
    assert len(await listed(agent)) == 5
    failed, first = await agent.crud(action="list", filters={"domain": "code_context"}, limit=2)
    assert not failed and len(first["items"]) == 2 and first["has_more"]
    failed, rest = await agent.crud(action="list", filters={"domain": "code_context"}, limit=2,
                                    cursor=first["next_cursor"])
    assert not failed and [e["domain"] for e in rest["items"]] == ["code_context"] and not rest["has_more"]
    # The cursor is bound to the filter: another domain with it is refused.
    failed, data = await agent.crud(action="list", filters={"domain": "user_pref"}, limit=2,
                                    cursor=first["next_cursor"])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"


async def test_retrieve_narrows_to_domains_and_items_carry_it(agent: Agent) -> None:
    await agent.create("deploy the service with docker compose", item={"domain": "code_context"})
    await agent.create("the user wants deploy notes kept short", item={"domain": "user_pref"})
    await agent.create("deploy windows are on tuesdays")  # no domain
    failed, data = await retrieve(agent, query="deploy")
    assert not failed and {i["domain"] for i in data["items"]} == {"code_context", "user_pref", None}
    failed, data = await retrieve(agent, query="deploy", domains=["user_pref"])
    assert not failed and [(i["domain"], i["content"]) for i in data["items"]] == [
        ("user_pref", "the user wants deploy notes kept short")]
    failed, data = await retrieve(agent, query="deploy", domains=["user_pref", "code_context"], mode="hybrid")
    assert not failed and {i["domain"] for i in data["items"]} == {"code_context", "user_pref"}
    assert "tuesdays" not in data["context"]
    failed, data = await retrieve(agent, query="deploy", domains=["agent_eval"])
    assert not failed and data["items"] == []
    failed, data = await retrieve(agent, query="deploy", domains=["prefs"])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert data["errors"][0]["details"]["field"].startswith("domains")


async def test_reflection_compaction_and_logged_turns_set_it(agent: Agent) -> None:
    failed, data = await agent.reflect(action="log", session_id="s", domain="code_context", turns=[
        {"role": "user", "content": "I prefer pytest over unittest for every project."},
        {"role": "user", "content": "We decided to deploy from the main branch."},
        {"role": "user", "content": "Always run the linter before committing."}])
    assert not failed and {i["domain"] for i in data["items"]} == {"code_context"}
    await agent.log("plain", "a turn logged without a domain")
    assert [t["domain"] for t in await listed(agent, session_id="plain")] == [None]
    failed, data = await agent.reflect(action="reflect", session_id="s", use_sampling=False)
    assert not failed and data["engine"] == "extractive", data
    by_content = {i["content"]: i["domain"] for i in data["items"]}
    assert by_content == {"The user prefers pytest over unittest for every project.": "user_pref",
                          "We decided to deploy from the main branch.": "system_fact",
                          "Always run the linter before committing.": "user_pref"}, by_content
    failed, data = await agent.reflect(action="reflect", session_id="s", facts=["The repo uses uv."])
    assert not failed and [i["domain"] for i in data["items"]] == ["system_fact"]
    failed, data = await agent.reflect(action="compact", session_id="s", keep_recent=0)
    assert not failed and data["summary_id"] and {i["domain"] for i in data["items"]} == {"session_summary"}
    summaries = await listed(agent, domain="session_summary")
    assert {s["id"] for s in summaries} == {i["id"] for i in data["items"]}
    assert all("compaction" in s["tags"] for s in summaries)
    # domain is for log only; a bad one is refused naming the field.
    failed, data = await agent.reflect(action="compact", session_id="s", domain="code_context")
    assert failed and data["errors"][0]["details"]["field"] == "domain"
    failed, data = await agent.reflect(action="log", session_id="s", domain="code",
                                       turns=[{"role": "user", "content": "hello there friend"}])
    assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
    assert data["errors"][0]["details"]["field"] == "domain"


async def test_the_host_hooks_log_a_coding_sessions_turns_as_code_context(agent: Agent, settings: Settings,
                                                                          tmp_path: Path) -> None:
    async with open_app(settings) as app:  # the hook helper's own opening of the store, beside the server
        hooks = HookEvents(HookSettings(locate=lambda _: Project("demo"), budget_chars=2000, min_score=0.45,
                                        start_chars=2000,
                                        state_dir=tmp_path / "state"), LocalDoor(app.door, app.launch_caller))
        caller = dataclasses.replace(app.launch_caller, project="demo")
        await hooks._log(caller, "host-1", [Turn("user", "Refactor the parser module", None, None),
                                            Turn("assistant", "Done: split it into two files", None, None)])
    failed, data = await agent.crud(action="list", namespace="alice/demo", filters={"session_id": "host-1"})
    assert not failed and [t["domain"] for t in data["items"]] == ["code_context", "code_context"], data


def _cli(settings: Settings, request: pytest.FixtureRequest, *args: str) -> subprocess.CompletedProcess[str]:
    extra = {"MEMORY_VECTOR_BACKEND": "none"}
    if settings.backend == "postgres":
        extra |= {"MEMORY_BACKEND": "postgres", "MEMORY_POSTGRES_URL": settings.postgres_url}
    env = server_env(Path(settings.data_dir), **extra)
    return subprocess.run([agent_memory_command(), *args], env=env, capture_output=True, text=True, timeout=120,
                          check=False)


async def test_export_and_import_keep_the_domain(agent: Agent, settings: Settings, request: pytest.FixtureRequest,
                                                 tmp_path: Path) -> None:
    made = {d: (await agent.create(f"a {d} memory", item={"domain": d}))["id"]
            for d in ("user_pref", "system_fact", "session_summary", "agent_eval", "code_context")}
    made[None] = (await agent.create("no domain"))["id"]
    exported = _cli(settings, request, "export", "--scope", "agent", "--namespace", "alice")
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert {e["id"]: e["domain"] for e in lines} == {i: d for d, i in made.items()}
    erased = _cli(settings, request, "erase", "--scope", "agent", "--namespace", "alice", "--yes")
    assert erased.returncode == 0, erased.stderr
    assert await listed(agent) == []
    dump = tmp_path / "export.jsonl"
    dump.write_text(exported.stdout, encoding="utf-8")
    imported = _cli(settings, request, "import", str(dump))
    assert imported.returncode == 0, imported.stderr
    assert {e["id"]: e["domain"] for e in await listed(agent)} == {i: d for d, i in made.items()}
    # A line with an unknown domain is refused with a reason, naming the field.
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**lines[0], "id": "mem_other", "domain": "prefs"}) + "\n", encoding="utf-8")
    refused = _cli(settings, request, "import", str(bad))
    assert refused.returncode != 0 and "domain" in refused.stderr + refused.stdout


def test_a_memorynode_domain_becomes_the_field_and_an_unknown_one_a_reported_tag() -> None:
    nodes = [{"id": "n1", "content": "prefers dark mode", "metadata": {"domain": "user_pref"}},
             {"id": "n2", "content": "an odd one", "metadata": {"domain": "gossip"}},
             {"id": "n3", "content": "no domain at all"}]
    drafts = [d for d in read_lines("memorynode", [json.dumps(n) + "\n" for n in nodes]) if isinstance(d, Draft)]
    assert [(d.domain, d.tags) for d in drafts] == [("user_pref", ()), (None, ("domain:gossip",)), (None, ())]
    assert any("gossip" in note for note in drafts[1].notes) and not drafts[0].notes
