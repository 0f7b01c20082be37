"""Secrets are never stored: every write path through a real MCP client session (memory_crud
create and update, memory_reflect log and reflect) and an import; read back, listed, retrieved
and in the raw database files. The setting off keeps text as sent."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mcp import Client

from agent_memory.config import Settings
from agent_memory.contracts.retrieve import MemoryRetrieveResult
from agent_memory.tools.server import create_server
from tests.conftest import Agent, make_settings
from tests.e2e.servers import agent_memory_command, server_env

pytestmark = pytest.mark.anyio

# Fake, format-valid values (never real ones).
GITHUB = "ghp_" + "Zq4T8mW2xL9pR3vB7nK1cY6hJ5dF0sG2aE8u"
OPENAI = "sk-proj-" + "Qw3rTy7uIo9pAs2dFg4hJk6lZx8cVb1nMq5wEr0tYu3iOp"
AWS = "AKIA" + "QWERTYUIOPASDFG2"
DB_PASSWORD = "Zx7!kQ2pWm"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
ANTHROPIC = "sk-ant-api03-" + "Ab1_" * 23 + "cdAA"
ALL = (GITHUB, OPENAI, AWS, DB_PASSWORD, STRIPE, ANTHROPIC)


def raw_bytes(settings: Settings) -> bytes:
    """Every byte of the SQLite database, its WAL included."""
    return b"".join(p.read_bytes() for p in Path(settings.sqlite_file).parent.glob("memory.db*"))


def never_stored(settings: Settings, *values: str) -> None:
    data = raw_bytes(settings)
    assert data and [v for v in values if v.encode() in data] == []


async def seen_everywhere(agent: Agent, query: str) -> str:
    """Everything the caller can read back: list of agent scope and sessions, and retrieval."""
    failed, listed = await agent.crud(action="list", limit=100)
    assert not failed
    ids = [item["id"] for item in listed["items"]]
    failed, read = await agent.crud(action="read", filters={"ids": ids})
    assert not failed
    found = await agent.call("memory_retrieve", MemoryRetrieveResult, {"query": query, "mode": "keyword",
                                                                       "min_score": 0, "relative_floor": 0})
    return str(listed) + str(read) + str(found[1])


async def test_crud_create_and_update_store_secrets_redacted_and_count_them(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "d")
    async with Client(create_server(settings), mode="legacy") as client:
        agent = Agent(client)
        failed, data = await agent.crud(action="create", items=[
            {"content": f"deploy token {GITHUB} and DATABASE_URL=postgres://app:{DB_PASSWORD}@db:5432/orders",
             "tags": ["deploy", f"aws={AWS}"]},
            {"content": "Restart the queue only after draining it"}])
        assert not failed and data["redacted"] == 3
        first = data["items"][0]
        assert first["content"] == ("deploy token [REDACTED:github_token] and "
                                    "DATABASE_URL=postgres://app:[REDACTED:password]@db:5432/orders")
        assert first["tags"] == ["deploy", "aws=[REDACTED:aws_access_key]"]
        failed, data = await agent.crud(action="update", items=[
            {"id": first["id"], "content": f"rotated: OPENAI_API_KEY={OPENAI}, deploy token kept in vault"}])
        assert not failed and data["redacted"] == 1 and "[REDACTED:openai_key]" in data["items"][0]["content"]
        failed, data = await agent.crud(action="update", if_match="stale", items=[  # kept as a conflict entry
            {"id": first["id"], "content": f"stripe {STRIPE} for the deploy token"}])
        assert failed and data["errors"][0]["code"] == "CONFLICT" and data["redacted"] == 1
        failed, data = await agent.crud(action="list")
        assert data["redacted"] == 0  # reads count nothing
        shown = await seen_everywhere(agent, "deploy token")
    assert "[REDACTED:" in shown and [v for v in ALL if v in shown] == []
    never_stored(settings, *ALL)


async def test_reflect_log_and_supplied_facts_store_secrets_redacted(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "d", compaction_threshold_chars=0)
    async with Client(create_server(settings), mode="legacy") as client:
        agent = Agent(client)
        logged = await agent.log("s1", f"my anthropic key is {ANTHROPIC}, use it for the deploy",
                                 {"role": "tool", "name": "shell", "content": f"$ env\nAWS_ACCESS_KEY_ID={AWS}"},
                                 "Never deploy on Fridays.")
        assert logged["redacted"] == 2 and logged["turns_processed"] == 3
        assert "[REDACTED:anthropic_key]" in logged["items"][0]["content"]
        failed, done = await agent.reflect(action="reflect", session_id="s1",
                                           facts=[f"The deploy uses the Stripe key {STRIPE}."],
                                           rules=[f"Rotate the GitHub token {GITHUB} every month."])
        assert not failed and done["engine"] == "supplied" and done["redacted"] == 2
        assert {i["content"] for i in done["items"]} == {"The deploy uses the Stripe key [REDACTED:stripe_key].",
                                                         "Rotate the GitHub token [REDACTED:github_token] every month."}
        failed, compacted = await agent.reflect(action="compact", session_id="s1", keep_recent=0)
        assert not failed and compacted["redacted"] == 0
        shown = await seen_everywhere(agent, "deploy")
    assert [v for v in ALL if v in shown] == []
    never_stored(settings, *ALL)


async def test_switched_off_the_text_is_stored_as_sent(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "d", redact_secrets=False)
    async with Client(create_server(settings), mode="legacy") as client:
        agent = Agent(client)
        failed, data = await agent.crud(action="create", items=[{"content": f"deploy token {GITHUB}"}])
        assert not failed and data["redacted"] == 0 and data["items"][0]["content"] == f"deploy token {GITHUB}"
        item = data["items"][0]
        failed, data = await agent.crud(action="update", items=[{"id": item["id"], "content": f"key {OPENAI}",
                                                                 "if_match": item["etag"]}])
        assert not failed and data["redacted"] == 0 and data["items"][0]["content"] == f"key {OPENAI}"
        failed, data = await agent.crud(action="update", items=[{"id": item["id"], "content": f"key {STRIPE}",
                                                                 "if_match": item["etag"]}])  # a stale etag
        assert failed and data["errors"][0]["code"] == "CONFLICT" and data["redacted"] == 0
        logged = await agent.log("s1", f"AWS_ACCESS_KEY_ID={AWS}")
        assert logged["redacted"] == 0 and logged["items"][0]["content"] == f"AWS_ACCESS_KEY_ID={AWS}"
        failed, done = await agent.reflect(action="reflect", session_id="s1",
                                           facts=[f"The deploy uses the key {ANTHROPIC}."])
        assert not failed and done["redacted"] == 0 and done["items"][0]["content"].endswith(f"{ANTHROPIC}.")
    assert [v for v in (OPENAI, STRIPE, AWS, ANTHROPIC) if v.encode() not in raw_bytes(settings)] == []


def test_an_import_keeps_a_secret_when_redaction_is_switched_off(tmp_path: Path) -> None:
    """The import command reads the setting where every other write path does (one redactor)."""
    notes = tmp_path / "notes.jsonl"
    notes.write_text(f'{{"content": "The deploy bot token is {GITHUB}"}}\n')
    data = tmp_path / "data"
    env = server_env(data, MEMORY_AGENT_ID="alice", MEMORY_TEAM="red", MEMORY_VECTOR_BACKEND="none",
                     MEMORY_REDACT_SECRETS="false")
    done = subprocess.run([agent_memory_command(), "import", "--from", "notes", str(notes)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"redacted": 0' in done.stdout
    assert GITHUB.encode() in raw_bytes(make_settings(data))


def test_an_imported_secret_is_stored_redacted(tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text(f'{{"content": "The deploy bot token is {GITHUB}", "tags": ["ops"]}}\n'
                     '{"content": "Restart the queue only after draining it"}\n')
    data = tmp_path / "data"
    env = server_env(data, MEMORY_AGENT_ID="alice", MEMORY_TEAM="red", MEMORY_VECTOR_BACKEND="none")
    done = subprocess.run([agent_memory_command(), "import", "--from", "notes", str(notes)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"redacted": 1' in done.stdout and "1 secrets redacted" in done.stderr
    settings = make_settings(data)
    assert b"[REDACTED:github_token]" in raw_bytes(settings)
    never_stored(settings, GITHUB)
