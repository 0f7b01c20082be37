"""The MCP link the framework integrations share, and the optional extras staying optional."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_memory.integrations.mcp_link import MemoryLink, MemoryPermissionError, token_identity
from agent_memory.tools.server import create_server
from tests.conftest import identity, make_settings
from tests.e2e.servers import agent_memory_command, server_env, token


def run_python(code: str, *, timeout: float = 60, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)


def test_importing_agent_memory_never_imports_the_frameworks() -> None:
    done = run_python("import sys, agent_memory, agent_memory.cli, agent_memory.integrations, "
                      "agent_memory.integrations.mcp_link\n"
                      "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                      "('autogen_core', 'langgraph', 'langchain_core')))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(("module", "package", "extra"), [("autogen", "autogen_core", "autogen"),
                                                           ("langgraph", "langgraph", "langgraph")])
def test_an_integration_without_its_extra_names_the_extra_to_install(module: str, package: str, extra: str) -> None:
    done = run_python(f"import sys; sys.modules[{package!r}] = None\n"
                      f"import agent_memory.integrations.{module}")
    assert done.returncode == 1
    assert f"from a clone of agent-memory: pip install '.[{extra}]'" in done.stderr.splitlines()[-1]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_link_speaks_as_its_identity_in_both_protocol_generations(tmp_path: Path, mode: str) -> None:
    server = create_server(make_settings(tmp_path / "data"))  # launch identity: alice
    link = MemoryLink.in_process(server, identity("carol", "sys3", "blue"), mode=mode)
    try:
        created = link.call_sync("memory_crud", {"action": "create", "scope": "team", "namespace": "blue",
                                                 "layer": "long_term", "items": [{"content": "blue team note"}]})
        assert [(e["owner_agent_id"], e["team"]) for e in created["items"]] == [("carol", "blue")]
        with pytest.raises(MemoryPermissionError) as denied:
            link.call_sync("memory_crud", {"action": "list", "scope": "team", "namespace": "red"})
        assert denied.value.code == "FORBIDDEN"
    finally:
        link.close_sync()


def test_a_server_that_does_not_start_is_a_connection_error() -> None:
    link = MemoryLink.stdio({"agent_id": "a", "system_type": "sys1", "team": "t"}, command="/bin/false", timeout=20)
    with pytest.raises(ConnectionError, match="could not open an MCP session"):
        link.call_sync("memory_crud", {"action": "list"})
    link.close_sync()


def test_identity_is_checked_and_a_token_names_its_identity() -> None:
    with pytest.raises(ValueError, match="system_type, team"):
        MemoryLink.stdio({"agent_id": "a"})
    assert token_identity(token("planner", "sys3", "platform")) == {
        "agent_id": "planner", "system_type": "sys3", "team": "platform"}
    with pytest.raises(ValueError, match="not an agent-memory bearer token"):
        token_identity("hello")


def test_a_link_left_open_does_not_hold_the_process_at_exit(tmp_path: Path) -> None:
    code = ("import sys\n"
            "from agent_memory.integrations.mcp_link import MemoryLink\n"
            "link = MemoryLink.stdio({'agent_id': 'a', 'system_type': 'sys1', 'team': 't'},"
            f" command={agent_memory_command()!r}, env=dict(__import__('os').environ))\n"
            "print(link.call_sync('memory_crud', {'action': 'create', 'items': [{'content': 'x'}]})"
            "['items'][0]['owner_agent_id'])\n")
    done = run_python(code, env=server_env(tmp_path / "data"), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "a"
    # The server's info lines (start, every call) stay out of the host program's stderr.
    assert '"level": "info"' not in done.stderr and "tool_invocation" not in done.stderr, done.stderr


def _children() -> set[int]:
    return {int(pid) for task in Path(f"/proc/{os.getpid()}/task").iterdir()
            for pid in (task / "children").read_text().split()}


def test_a_server_that_goes_away_is_a_connection_error(tmp_path: Path) -> None:
    before = _children()
    link = MemoryLink.stdio({"agent_id": "a", "system_type": "sys1", "team": "t"}, command=agent_memory_command(),
                            env=server_env(tmp_path / "data"), timeout=20)
    try:
        assert link.call_sync("memory_crud", {"action": "list"})["items"] == []
        (server,) = _children() - before
        os.kill(server, signal.SIGKILL)
        with pytest.raises(ConnectionError, match="has ended"):
            for _ in range(100):  # the SDK notices the closed pipe at once, or at the next call
                link.call_sync("memory_crud", {"action": "list"})
                time.sleep(0.05)
    finally:
        link.close_sync()
