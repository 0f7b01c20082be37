"""`agent-memory prune` and `agent-memory erase` as an operator runs them, with and without a
server holding the store; and pruning after writes inside a running server."""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import INDEXED, agent_memory_command, server_env

pytestmark = pytest.mark.anyio


def run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([agent_memory_command(), *args], env=env, input=stdin, capture_output=True, text=True,
                          timeout=180)


async def _create(client: Client, *texts: str, **extra: object) -> list[str]:
    made = await client.call_tool("memory_crud", {"action": "create", **extra,
                                                  "items": [{"content": t} for t in texts]})
    assert not made.is_error, made.structured_content
    return [i["id"] for i in made.structured_content["items"]]


async def _ids(client: Client, **extra: object) -> set[str]:
    listed = await client.call_tool("memory_crud", {"action": "list", "limit": 100, **extra})
    return {i["id"] for i in listed.structured_content["items"]}


async def test_prune_dry_run_lists_and_prune_deletes(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", MEMORY_VECTOR_BACKEND="none", MEMORY_MAX_ENTRIES_PER_NAMESPACE="3",
                     MEMORY_PRUNE_INTERVAL_SECONDS="0", MEMORY_RATE_LIMIT_PER_SECOND="0")
    # A server that only prunes on its schedule (off) and after writes (limit high at first).
    quiet = dict(env, MEMORY_MAX_ENTRIES_PER_NAMESPACE="1000")
    async with Client(StdioServerParameters(command=agent_memory_command(), args=["serve"], env=quiet),
                      mode="legacy", read_timeout_seconds=60) as client:
        ids = await _create(client, "one", "two", "three", "four", "five")
    dry = run(env, "prune", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = [line.split("\t") for line in dry.stdout.splitlines()]
    assert [(line[0], line[3]) for line in lines] == [(ids[0], "over_limit"), (ids[1], "over_limit")]
    assert "would delete 2 entries (2 over_limit)" in dry.stderr
    done = run(env, "prune")
    assert done.returncode == 0 and "deleted 2 entries" in done.stderr
    assert run(env, "prune").stdout == ""
    bad = run(env, "prune", "--max-entries-per-namespace", "zero")
    assert bad.returncode == 2 and "max_entries_per_namespace" in bad.stderr


async def test_a_namespace_that_grows_past_its_limit_is_pruned_after_the_write(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", MEMORY_VECTOR_BACKEND="none", MEMORY_MAX_ENTRIES_PER_NAMESPACE="4",
                     MEMORY_RATE_LIMIT_PER_SECOND="0")
    async with Client(StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env),
                      mode="legacy", read_timeout_seconds=60) as client:
        ids = await _create(client, *[f"note {n}" for n in range(7)])
        with anyio.fail_after(20):
            while len(await _ids(client)) > 4:
                await anyio.sleep(0.1)
        assert await _ids(client) == set(ids[3:])


async def test_erase_asks_first_and_removes_vectors_through_the_owning_server(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", MEMORY_RATE_LIMIT_PER_SECOND="0", MEMORY_SYSTEM_TYPE="sys3", **INDEXED)
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        secret = await _create(client, "The staging database password rotates monthly.", scope="team",
                               namespace="ops/secrets", layer="long_term")
        deeper = await _create(client, "The vault unseal keys are split five ways.", scope="team",
                               namespace="ops/secrets/vault", layer="long_term")
        kept = await _create(client, "The on-call rota changes on Mondays.", scope="team", namespace="ops",
                             layer="long_term")
        with anyio.fail_after(60):  # indexed: findable by meaning
            while True:
                found = await client.call_tool("memory_retrieve", {"query": "credentials and keys",
                                                                   "mode": "semantic", "min_score": 0})
                data = found.structured_content
                if data["degraded"] is None and {i["id"] for i in data["items"]} >= set(secret + deeper):
                    break
                await anyio.sleep(0.2)
        refused = run(env, "erase", "--scope", "team", "--namespace", "ops/secrets", "--cascade", stdin="no\n")
        assert refused.returncode == 1 and "aborted" in refused.stderr and "Erase 2 entries" in refused.stderr
        assert await _ids(client, scope="team", namespace="ops/secrets") == set(secret)
        erased = run(env, "erase", "--scope", "team", "--namespace", "ops/secrets", "--cascade", stdin="yes\n")
        assert erased.returncode == 0, erased.stderr
        assert "erased 2 entries" in erased.stderr and "vectors removed by the server" in erased.stderr
        assert {line.split("\t")[0] for line in erased.stdout.splitlines()} == set(secret + deeper)
        assert await _ids(client, scope="team", namespace="ops/secrets") == set()
        assert await _ids(client, scope="team", namespace="ops") == set(kept)
        found = await client.call_tool("memory_retrieve", {"query": "credentials and keys", "mode": "semantic",
                                                           "min_score": 0})
        assert not {i["id"] for i in found.structured_content["items"]} & set(secret + deeper)
    nothing = run(env, "erase", "--scope", "team", "--namespace", "ops/secrets", "--yes")
    assert nothing.returncode == 0 and "nothing to erase" in nothing.stderr
    bad = run(env, "erase", "--scope", "team", "--namespace", "../etc", "--yes")
    assert bad.returncode == 2 and "namespace" in bad.stderr
    # With no server running, erase removes the vectors itself.
    alone = run(env, "erase", "--scope", "team", "--namespace", "ops", "--yes")
    assert alone.returncode == 0 and "erased 1 entries" in alone.stderr and "vectors removed" in alone.stderr


async def test_prune_keeps_a_session_in_long_term_memory_before_its_turns_go(tmp_path: Path) -> None:
    """Issue 37, item 1, as an operator runs it: the turns past their retention go only after the
    session is distilled and digested; the dry run says so first."""
    env = server_env(tmp_path / "data", MEMORY_VECTOR_BACKEND="none", MEMORY_PRUNE_INTERVAL_SECONDS="0",
                     MEMORY_RATE_LIMIT_PER_SECOND="0")
    async with Client(StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env),
                      read_timeout_seconds=60) as client:
        logged = await client.call_tool("memory_reflect", {"action": "log", "session_id": "s-1", "turns": [
            {"role": "user", "content": "Our staging database is db-07 on port 6543."},
            {"role": "assistant", "content": "Noted."}]})
        assert not logged.is_error, logged.structured_content
    await anyio.sleep(1.2)
    expiring = dict(env, MEMORY_RETENTION_SESSION_DAYS=str(1 / 86_400))
    dry = run(expiring, "prune", "--dry-run")
    assert dry.returncode == 0 and "would delete 2 entries (2 retention); 1 sessions would be kept" in dry.stderr
    done = run(expiring, "prune")
    assert done.returncode == 0 and "deleted 2 entries (2 retention)" in done.stderr, done.stderr
    async with Client(StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env),
                      read_timeout_seconds=60) as client:
        listed = await client.call_tool("memory_crud", {"action": "list", "limit": 100})
    items = listed.structured_content["items"]
    assert {i["layer"] for i in items} == {"long_term"}  # the digest, and what reflection distilled
    digests = [i for i in items if "session-digest" in i["tags"]]
    assert len(digests) == 1 and digests[0]["content"].endswith("user: Our staging database is db-07 on port 6543.")
    assert "Noted" not in digests[0]["content"]
