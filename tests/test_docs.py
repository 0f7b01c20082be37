"""The README, docs/ and configs/ stay true to the code."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from agent_memory.cli.main import _parser
from agent_memory.config import env_name, flag_settings, setting_names

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text()


@pytest.mark.parametrize("name", setting_names())
def test_the_configuration_table_names_every_setting(name: str) -> None:
    rows = [line for line in CONFIGURATION.splitlines() if line.startswith(f"| `{name}` | `{env_name(name)}` |")]
    assert len(rows) == 1, f"docs/configuration.md lacks a row for {name}"
    flags = dict(flag_settings()).get(name, ())
    flag_cell = rows[0].split("|")[3]
    assert [f for f in flags if f"`{f}`" not in flag_cell] == []
    if not flags:
        assert flag_cell.strip() == "(none)"


def test_the_configuration_table_names_nothing_else_and_its_example_uses_real_settings() -> None:
    named = [line.split("`")[1] for line in CONFIGURATION.splitlines() if line.startswith("| `")]
    assert sorted(named) == sorted(setting_names())
    example = tomllib.loads(CONFIGURATION.split("```toml\n", 1)[1].split("```", 1)[0])
    assert set(example) <= set(setting_names())


def test_quickstart_test_command_is_what_ci_runs() -> None:
    quickstart = README.split("## Quickstart", 1)[1].split("## ", 1)[0]
    commands = [line for line in quickstart.splitlines() if ".venv/bin/python -m pytest" in line]
    assert len(commands) == 1
    assert commands[0].strip() in (ROOT / ".ci" / "run").read_text().splitlines()


@pytest.mark.parametrize("name", ["vscode-http.mcp.json", "http-client.mcp.json"])
def test_http_host_configs_point_at_mcp_with_a_bearer_header(name: str) -> None:
    data = json.loads((ROOT / "configs" / name).read_text())
    (server,) = (data.get("mcpServers") or data["servers"]).values()
    assert server["type"] == "http" and server["url"] == "http://127.0.0.1:8765/mcp"
    assert server["headers"]["Authorization"].startswith("Bearer ")


@pytest.mark.parametrize("name", ["claude_desktop.json", "vscode.mcp.json", "cursor.mcp.json"])
def test_host_configs_launch_a_valid_serve_command(name: str) -> None:
    data = json.loads((ROOT / "configs" / name).read_text())
    (server,) = (data.get("mcpServers") or data["servers"]).values()
    # Desktop hosts do not search the PATH of a shell (nor a venv's bin): an absolute path, as `setup` prints.
    assert server["command"].startswith("/") and server["command"].endswith("/agent-memory")
    options = _parser().parse_args(server["args"])
    assert options.command == "serve"
