"""Revocation through the real surfaces: tokens minted with `agent-memory token issue`, two
`agent-memory serve --http` processes sharing one store (one SQLite data directory; one PostgreSQL
database), and `agent-memory token revoke` run beside them: the next request with a revoked token
gets 401 "token revoked" on both servers, on /mcp and on the console's API."""

from __future__ import annotations

import json
import subprocess
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.e2e.servers import SECRET, agent_memory_command, free_port, http_client, running, server_env, token

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "revocation-test", "version": "1"}}}


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([agent_memory_command(), "token", *args], env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _servers(stack: ExitStack, tmp_path: Path, envs: list[dict[str, str]]) -> list[str]:
    urls = []
    for n, env in enumerate(envs):
        port = free_port()
        stack.enter_context(running([agent_memory_command(), "serve", "--http", "--port", str(port)], port,
                                    tmp_path / f"server-{n}.log", env))
        urls.append(f"http://127.0.0.1:{port}")
    return urls


def _refused(answer: httpx.Response) -> str:
    assert answer.status_code == 401, answer.text
    body = answer.json()
    return str(body.get("error_description") or body.get("message"))


async def _revoked_on_the_next_request_everywhere(urls: list[str], cli_env: dict[str, str]) -> None:
    agent = _cli(cli_env, "issue", "--agent-id", "bot-1", "--system-type", "sys3", "--team", "red").strip()
    operator = _cli(cli_env, "issue", "--operator", "--agent-id", "alice").strip()
    unrecorded = token("bot-2", "sys1", "red", secret=SECRET)  # minted without the CLI: only --agent reaches it
    kept = _cli(cli_env, "issue", "--agent-id", "bot-3", "--system-type", "sys1", "--team", "red").strip()
    for base in urls:
        for bearer in (agent, unrecorded, kept):
            async with http_client(f"{base}/mcp", bearer) as client:
                listed = await client.call_tool("memory_crud", {"action": "list"})
                assert not listed.is_error, listed.structured_content
        who = httpx.get(f"{base}/console/api/whoami", headers={"Authorization": f"Bearer {operator}"}, timeout=30)
        assert who.status_code == 200 and who.json()["operator"] is True

    ids = {row["agent_id"]: row["id"] for row in map(json.loads, _cli(cli_env, "list").splitlines())}
    _cli(cli_env, "revoke", ids["bot-1"])
    _cli(cli_env, "revoke", ids["alice"])
    _cli(cli_env, "revoke", "--agent", "bot-2")

    for base in urls:
        for bearer in (agent, unrecorded):
            answer = httpx.post(f"{base}/mcp", json=INITIALIZE, timeout=30, headers={
                "Authorization": f"Bearer {bearer}", "Accept": "application/json, text/event-stream"})
            assert _refused(answer) == "token revoked"
            assert 'error_description="token revoked"' in answer.headers["www-authenticate"]
        who = httpx.get(f"{base}/console/api/whoami", headers={"Authorization": f"Bearer {operator}"}, timeout=30)
        assert "token revoked" in _refused(who)
        async with http_client(f"{base}/mcp", kept) as client:  # another agent's token is untouched
            assert not (await client.call_tool("memory_crud", {"action": "list"})).is_error
    listed = {row["agent_id"]: row for row in map(json.loads, _cli(cli_env, "list").splitlines())}
    assert listed["bot-1"]["revoked_at"] and listed["alice"]["revoked_at"] and listed["bot-3"]["revoked_at"] is None


async def test_a_revoked_token_is_refused_on_the_next_request_by_both_servers_of_a_data_directory(
    tmp_path: Path,
) -> None:
    env = server_env(tmp_path / "data", MEMORY_AUTH_SECRET=SECRET, MEMORY_VECTOR_BACKEND="none",
                     MEMORY_RATE_LIMIT_PER_SECOND="0")
    with ExitStack() as stack:
        urls = _servers(stack, tmp_path, [env, env])
        await _revoked_on_the_next_request_everywhere(urls, env)


async def test_a_revoked_token_is_refused_on_the_next_request_by_both_servers_of_a_postgres_store(
    tmp_path: Path, postgres_url: str,
) -> None:
    def env(name: str) -> dict[str, str]:
        (tmp_path / name).mkdir()
        return server_env(tmp_path / name, MEMORY_AUTH_SECRET=SECRET, MEMORY_BACKEND="postgres",
                          MEMORY_POSTGRES_URL=postgres_url, MEMORY_VECTOR_BACKEND="none",
                          MEMORY_RATE_LIMIT_PER_SECOND="0")

    with ExitStack() as stack:
        urls = _servers(stack, tmp_path, [env("host0"), env("host1")])
        await _revoked_on_the_next_request_everywhere(urls, env("operator-laptop"))
