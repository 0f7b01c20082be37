"""The hooks of two developers on one team's `serve --http` (issue 36, item 4): each captures into
and recalls from the shared server under their own bearer token, on SQLite and on PostgreSQL; each
recalls the other's team facts and neither sees the other's agent memory. A server that cannot be
reached: the hook exits 0 within its limit, keeps what it should have captured in a private file,
and delivers it once the server answers, once."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import chosen_backends
from tests.e2e.model_standin import model_standin
from tests.e2e.servers import (
    SECRET,
    agent_memory_command,
    free_port,
    http_client,
    http_server,
    running,
    server_env,
    token,
)
from tests.e2e.test_claude_code import QUIET, claude  # noqa: F401 - the fixture
from tests.hooks.conftest import checkout
from tests.hooks.helper import HookRunner, transcript_line

pytestmark = pytest.mark.anyio
QUIET_SERVER = {"MEMORY_VECTOR_BACKEND": "none", "MEMORY_RATE_LIMIT_PER_SECOND": "0"}


def store_env(backend: str, request: pytest.FixtureRequest) -> dict[str, str]:
    if backend == "postgres":
        return {"MEMORY_BACKEND": "postgres", "MEMORY_POSTGRES_URL": request.getfixturevalue("postgres_url")}
    return {}


def token_file(path: Path, bearer: str) -> Path:
    path.write_text(bearer + "\n")
    path.chmod(0o600)
    return path


@contextmanager
def developer(tmp_path: Path, name: str, url: str, **extra: str) -> Iterator[HookRunner]:
    """`name`'s hooks on their own machine (their own data directory for the hooks' state), on the
    team's server under their own token."""
    bearer = token_file(tmp_path / f"{name}.token", token(name, "sys3", "red"))
    runner = HookRunner(tmp_path / f"{name}-home", hook_server_url=url, hook_token_file=str(bearer),
                        hook_time_limit="20", **extra)
    try:
        yield runner
    finally:
        runner.stop()


def said(hooks: HookRunner, project: Path, transcript: Path, session: str, *lines: str) -> None:
    transcript.write_text("".join(transcript_line("user", line, n=n) for n, line in enumerate(lines)))
    done = hooks.run({"hook_event_name": "SessionEnd", "session_id": session, "cwd": str(project),
                      "transcript_path": str(transcript), "reason": "exit"})
    assert (done.returncode, done.stderr) == (0, ""), done.stderr


def asked(hooks: HookRunner, project: Path, prompt: str) -> str:
    return hooks.context({"hook_event_name": "UserPromptSubmit", "session_id": "later", "cwd": str(project),
                          "transcript_path": "", "prompt": prompt})


@pytest.mark.parametrize("backend", chosen_backends())
async def test_two_developers_share_team_facts_and_keep_their_own(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    with http_server(tmp_path / "server", **QUIET_SERVER, **store_env(backend, request)) as url:
        alice_repo = checkout(tmp_path / "alice" / "shop")
        bob_repo = checkout(tmp_path / "bob" / "shop-api")  # the same repository, another checkout
        with developer(tmp_path, "alice", url) as alice, developer(tmp_path, "bob", url) as bob:
            said(alice, alice_repo, tmp_path / "a.jsonl", "a-1", "My scratch notes live in the tangerine folder.")
            said(bob, bob_repo, tmp_path / "b.jsonl", "b-1", "My scratch branch is called bob-kiwi-experiments.")
            project = "red/shop-api-19c51d42"  # the team's namespace of the project (tests/hooks/conftest.py)
            for name, fact in (("alice", "The team staging cluster is kube-stage-lagoon."),
                               ("bob", "The team CI image is ci-base-pelican.")):
                async with http_client(url, token(name, "sys3", "red")) as client:
                    made = await client.call_tool("memory_crud", {"action": "create", "scope": "team",
                                                                  "namespace": project, "layer": "long_term",
                                                                  "items": [{"content": fact}]})
                    assert not made.is_error, made.structured_content
            assert "kube-stage-lagoon" in asked(bob, bob_repo, "which staging cluster does the team use?")
            assert "ci-base-pelican" in asked(alice, alice_repo, "which CI image does the team use?")
            assert "tangerine" in asked(alice, alice_repo, "where do my scratch notes live? tangerine?")
            assert "tangerine" not in asked(bob, bob_repo, "where do the scratch notes live? tangerine?")
            assert "bob-kiwi" not in asked(alice, alice_repo, "what is the scratch branch called? bob-kiwi?")
            assert "bob-kiwi" in asked(bob, bob_repo, "what is my scratch branch called? bob-kiwi?")


def test_a_server_that_cannot_be_reached_loses_nothing_and_gets_everything_once(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    repo = checkout(tmp_path / "shop")
    with developer(tmp_path, "alice", url) as alice:
        transcript = tmp_path / "a.jsonl"
        transcript.write_text(transcript_line("user", "The nightly export runs at 02:15 from cron-host-9.", n=1))
        started = time.monotonic()
        done = alice.run({"hook_event_name": "Stop", "session_id": "a-1", "cwd": str(repo),
                          "transcript_path": str(transcript)})
        assert done.returncode == 0 and "did not answer" in done.stderr and time.monotonic() - started < 20
        kept = list((tmp_path / "alice-home" / "hooks" / "pending").glob("*.json"))
        assert len(kept) == 1 and stat.S_IMODE(kept[0].stat().st_mode) == 0o600
        with running([agent_memory_command(), "serve", "--http", "--port", str(port)], port,
                     tmp_path / "server.log", server_env(tmp_path / "server", MEMORY_AUTH_SECRET=SECRET,
                                                         **QUIET_SERVER)):
            deadline = time.monotonic() + 60  # the helper sends what it kept after answering the next hook
            while "02:15" not in asked(alice, repo, "when does the nightly export run? cron-host-9?"):
                assert time.monotonic() < deadline, "what was kept never reached the server"
                time.sleep(0.2)
            assert not list((tmp_path / "alice-home" / "hooks" / "pending").glob("*.json"))
            transcript.write_text(transcript.read_text() + transcript_line("user", "It writes to bucket otter.", n=2))
            assert alice.run({"hook_event_name": "Stop", "session_id": "a-1", "cwd": str(repo),
                              "transcript_path": str(transcript)}).returncode == 0
            turns = listed_turns(url, "alice", "a-1")
    assert sorted(turns) == ["It writes to bucket otter.", "The nightly export runs at 02:15 from cron-host-9."]


def listed_turns(url: str, name: str, session: str) -> list[str]:
    import anyio

    async def read() -> list[str]:
        async with http_client(url, token(name, "sys3", "red")) as client:
            found = await client.call_tool("memory_crud", {"action": "list", "namespace": f"{name}/shop-api-19c51d42",
                                                           "filters": {"session_id": session}})
            return [item["content"] for item in found.structured_content["items"]]

    return anyio.run(read)


def test_a_token_file_others_may_read_is_refused(tmp_path: Path) -> None:
    repo = checkout(tmp_path / "shop")
    with developer(tmp_path, "alice", "http://127.0.0.1:9/mcp") as alice:
        os.chmod(tmp_path / "alice.token", 0o644)
        done = alice.run({"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(repo), "prompt": "hi"})
        assert done.returncode == 0 and "additionalContext" not in done.stdout
        assert len(done.stderr.strip().splitlines()) == 1 and "chmod 600" in done.stderr + alice_log(alice)


def alice_log(runner: HookRunner) -> str:
    return "\n".join(p.read_text(errors="replace") for p in runner.runtime.rglob("*.log"))


async def test_the_real_cli_set_up_for_the_teams_server_recalls_and_calls_it(
        claude: str, tmp_path: Path) -> None:  # noqa: F811 - the fixture
    """`setup claude-code --server-url URL --token-file FILE --write`, then the real CLI: the hook
    recalls a team fact from the server into the prompt, and the model's tools are the server's."""
    with http_server(tmp_path / "server", **QUIET_SERVER) as url:
        async with http_client(url, token("lead", "sys3", "red")) as client:
            fact = {"content": "The team deploys with Argo rollouts."}
            made = await client.call_tool("memory_crud", {"action": "create", "scope": "team", "layer": "long_term",
                                                          "namespace": "red/shop-api-19c51d42", "items": [fact]})
            assert not made.is_error
        repo = checkout(tmp_path / "shop")
        home = tmp_path / "home"
        home.mkdir()
        bearer = token_file(tmp_path / "dev.token", token("dev", "sys1", "red"))
        runner = HookRunner(tmp_path / "dev-state")
        env = {**runner.env, "HOME": str(home), "PATH": os.environ.get("PATH", "")}
        try:
            done = subprocess.run([agent_memory_command(), "setup", "claude-code", "--server-url", url,
                                   "--token-file", str(bearer), "--write"], cwd=repo, env=env, capture_output=True,
                                  text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            with model_standin() as (standin, port):
                run_env = {**env, **QUIET, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
                           "AGENT_MEMORY_TOKEN": bearer.read_text().strip()}
                done = subprocess.run([claude, "-p", "How does the team deploy? Argo?"], cwd=repo, env=run_env,
                                      capture_output=True, text=True, timeout=120)
                assert done.returncode == 0, (done.stdout, done.stderr)
                sent = json.dumps(standin.requests)
            assert "Argo rollouts" in sent  # recalled by the hook from the team's server
            assert "mcp__agent-memory__memory_retrieve" in sent  # the model's tools: the same server's
        finally:
            runner.stop()
