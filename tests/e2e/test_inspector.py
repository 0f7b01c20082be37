"""A real third-party client: the MCP Inspector's CLI mode (Node), installed with npm into a cache
directory, drives `agent-memory serve` over stdio and over HTTP with a bearer token.

When node/npm are missing or the npm registry cannot be reached the test is skipped, and the skip
says why (pytest prints skip reasons: `-rs` is in the configured options)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.servers import agent_memory_command, http_server, token
from tests.npm_cache import node_script

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"  # runs on Node 20 (an engine warning only)
ENTRY = "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    command, why = node_script(INSPECTOR, ENTRY)
    if command is None:
        pytest.skip(f"MCP Inspector test skipped: {why}")
    return [*command, "--cli"]


def _run(command: list[str]) -> dict:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    # The Inspector checks tool schemas for portability across model providers' dialects.
    assert "Schema portability" not in done.stderr, done.stderr[-2000:]
    return json.loads(done.stdout)


def _check_tools(listed: dict) -> None:
    tools = {t["name"]: t for t in listed["tools"]}
    assert sorted(tools) == ["memory_crud", "memory_reflect", "memory_retrieve"]
    for tool in tools.values():
        assert tool["inputSchema"]["type"] == "object" and tool["outputSchema"]["type"] == "object"
    assert "action" in tools["memory_crud"]["inputSchema"]["properties"]
    assert tools["memory_retrieve"]["inputSchema"]["required"] == ["query"]


def _create_then_list(base: list[str], text: str) -> None:
    created = _run([*base, "--method", "tools/call", "--tool-name", "memory_crud", "--tool-arg", "action=create",
                    "--tool-arg", json.dumps({"content": text}, ensure_ascii=False).join(["items=[", "]"])])
    assert not created.get("isError"), created
    entry = created["structuredContent"]["items"][0]
    listed = _run([*base, "--method", "tools/call", "--tool-name", "memory_crud", "--tool-arg", "action=list"])
    assert [e["id"] for e in listed["structuredContent"]["items"]] == [entry["id"]]
    assert listed["structuredContent"]["items"][0]["content"] == text


def test_inspector_over_stdio(inspector: list[str], tmp_path: Path) -> None:
    base = [*inspector, "-e", f"MEMORY_DATA_DIR={tmp_path / 'data'}", "-e", "MEMORY_AGENT_ID=inspector",
            "-e", "MEMORY_VECTOR_BACKEND=none", agent_memory_command(), "serve"]
    _check_tools(_run([*base, "--method", "tools/list"]))
    _create_then_list(base, "Remembered through the MCP Inspector — über stdio")


def test_inspector_over_http_with_a_bearer_token(inspector: list[str], tmp_path: Path) -> None:
    with http_server(tmp_path / "data", MEMORY_VECTOR_BACKEND="none") as url:
        bearer = token("inspector", "sys1", "red")
        base = [*inspector, url, "--transport", "http", "--header", f"Authorization: Bearer {bearer}"]
        _check_tools(_run([*base, "--method", "tools/list"]))
        _create_then_list(base, "Remembered through the MCP Inspector over HTTP")
        refused = subprocess.run([*inspector, url, "--transport", "http", "--method", "tools/list"],
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode != 0  # no token: 401
