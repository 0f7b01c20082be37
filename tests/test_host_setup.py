"""`agent-memory setup HOST`: the printed config launches this installation; `--write` merges it
into the host's file (a temporary HOME here), keeping everything else and backing the file up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from agent_memory.cli.main import _parser, main
from tests.e2e.servers import agent_memory_command, server_env

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {"claude-desktop": "claude_desktop.json", "vscode": "vscode.mcp.json", "cursor": "cursor.mcp.json"}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.chdir(home)
    return home


def printed(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["setup", *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("host", sorted(CONFIGS))
def test_printed_config_names_the_installed_command_by_absolute_path(
        host: str, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = printed(capsys, host, "--agent-id", "planner", "--system-type", "sys3", "--team", "platform")
    (key,) = config
    (server,) = config[key].values()
    assert server["command"] == str(Path(agent_memory_command()).resolve())
    options = _parser().parse_args(server["args"])
    assert (options.command, options.agent_id, options.system_type, options.team) == \
        ("serve", "planner", "sys3", "platform")
    # The ready-made file in configs/ is the same config with a placeholder for the path.
    shipped = json.loads((ROOT / "configs" / CONFIGS[host]).read_text())
    (shipped_server,) = shipped[key].values()
    default = printed(capsys, host)[key]["agent-memory"]
    assert {**shipped_server, "command": default["command"]} == default


@pytest.mark.anyio
async def test_the_printed_command_serves_mcp(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = printed(capsys, "cursor", "--agent-id", "from-setup")["mcpServers"]["agent-memory"]
    env = {k: v for k, v in server_env(tmp_path / "data").items() if k not in ("MEMORY_AGENT_ID", "MEMORY_TEAM")}
    params = StdioServerParameters(command=server["command"], args=server["args"], env=env)
    async with Client(params, read_timeout_seconds=30) as client:
        created = await client.call_tool("memory_crud", {"action": "create", "items": [{"content": "set up"}]})
    assert created.structured_content["items"][0]["owner_agent_id"] == "from-setup"


def test_write_merges_into_claude_desktop_keeping_other_servers(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = home / ".config" / "Claude" / "claude_desktop_config.json"
    target.parent.mkdir(parents=True)
    original = {"mcpServers": {"other": {"command": "/usr/bin/other", "args": []}}, "globalShortcut": "Ctrl+Space"}
    target.write_text(json.dumps(original))
    target.chmod(0o600)
    assert main(["setup", "claude-desktop", "--write"]) == 0
    assert "added server 'agent-memory'" in capsys.readouterr().err
    merged = json.loads(target.read_text())
    assert merged["globalShortcut"] == "Ctrl+Space"
    assert merged["mcpServers"]["other"] == original["mcpServers"]["other"]
    assert merged["mcpServers"]["agent-memory"]["command"] == str(Path(agent_memory_command()).resolve())
    assert json.loads((target.parent / "claude_desktop_config.json.bak").read_text()) == original
    assert target.stat().st_mode & 0o777 == 0o600
    # Again, with another identity: the entry is replaced, the earlier file kept beside the first backup.
    assert main(["setup", "claude-desktop", "--write", "--agent-id", "desk-2"]) == 0
    assert "replaced server 'agent-memory'" in capsys.readouterr().err
    again = json.loads(target.read_text())
    assert again["mcpServers"]["agent-memory"]["args"][2] == "desk-2" and "other" in again["mcpServers"]
    assert json.loads((target.parent / "claude_desktop_config.json.bak.1").read_text()) == merged


def test_write_creates_the_vscode_workspace_and_cursor_files(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["setup", "vscode", "--write"]) == 0
    vscode = json.loads((home / ".vscode" / "mcp.json").read_text())
    assert vscode["servers"]["agent-memory"]["type"] == "stdio"
    assert main(["setup", "cursor", "--write", "--name", "memory-2"]) == 0
    cursor = json.loads((home / ".cursor" / "mcp.json").read_text())
    assert list(cursor["mcpServers"]) == ["memory-2"]
    assert not list(home.glob("**/*.bak"))  # nothing to back up when the file was new


def test_a_file_that_is_not_plain_json_is_left_alone(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = home / ".cursor" / "mcp.json"
    target.parent.mkdir()
    target.write_text('{\n  // my servers\n  "mcpServers": {}\n}\n')
    assert main(["setup", "cursor", "--write"]) == 1
    assert "is not plain JSON" in capsys.readouterr().err
    assert target.read_text().startswith('{\n  // my servers') and not list(target.parent.glob("*.bak*"))
    target.write_text('{"mcpServers": []}')
    assert main(["setup", "cursor", "--write"]) == 1
    assert '"mcpServers" in' in capsys.readouterr().err


def test_an_invalid_identity_is_refused(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["setup", "vscode", "--system-type", "3"]) == 2
    assert "system_type must be one of sys1" in capsys.readouterr().err
    assert main(["setup", "vscode", "--write", "--team", ""]) == 2
    assert not (home / ".vscode").exists()
