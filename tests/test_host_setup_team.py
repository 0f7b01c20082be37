"""`agent-memory setup claude-code|gemini-cli --server-url URL --token-file FILE` (issue 36, item
4): the hooks and the MCP entry on a team's `serve --http` under the developer's own token; a URL
that is not http(s), or a token file others may read, is refused with nothing written; and
`agent-memory token header`, what the host's headers helper runs."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from agent_memory.cli.main import main
from tests.e2e.servers import agent_memory_command, token
from tests.hooks.conftest import SHOP_API, checkout
from tests.test_host_setup import home  # noqa: F401 - the fixture

URL = "https://memory.internal:8765/mcp"


@pytest.fixture
def token_file(home: Path) -> Path:  # noqa: F811
    path = home / "alice.token"
    path.write_text(token("alice", "sys3", "red") + "\n")
    path.chmod(0o600)
    return path


def test_claude_code_on_the_teams_server(home: Path, token_file: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
                                         capsys: pytest.CaptureFixture[str]) -> None:
    project = checkout(home / "shop")
    monkeypatch.chdir(project)
    assert main(["setup", "claude-code", "--server-url", URL, "--token-file", str(token_file), "--write"]) == 0
    assert "AGENT_MEMORY_TOKEN" in capsys.readouterr().err
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["agent-memory"]
    assert entry["type"] == "http" and entry["url"] == URL
    assert entry["headers"] == {"Authorization": "Bearer ${AGENT_MEMORY_TOKEN}", "X-Agent-Memory-Project": SHOP_API}
    helper = shlex.split(entry["headersHelper"])
    assert helper[1:] == ["token", "header", "--file", str(token_file.resolve()), "--project", SHOP_API]
    assert token_file.read_text().strip() not in (project / ".mcp.json").read_text()  # the token stays in its file
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    command = shlex.split(hooks["UserPromptSubmit"][0]["hooks"][0]["command"])
    assert command[1:3] == ["hook", "claude-code"] and "--agent-id" not in command  # the token says who
    assert command[command.index("--hook-server-url") + 1] == URL
    assert command[command.index("--hook-token-file") + 1] == str(token_file.resolve())
    shown = subprocess.run(helper, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and json.loads(shown.stdout) == {
        "Authorization": f"Bearer {token_file.read_text().strip()}", "X-Agent-Memory-Project": SHOP_API}


def test_gemini_cli_on_the_teams_server(home: Path, token_file: Path,  # noqa: F811
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["setup", "gemini-cli", "--server-url", URL, "--token-file", str(token_file), "--scope", "user",
                 "--write"]) == 0
    data = json.loads((home / ".gemini" / "settings.json").read_text())
    assert data["mcpServers"]["agent-memory"] == {"httpUrl": URL,
                                                  "headers": {"Authorization": "Bearer ${AGENT_MEMORY_TOKEN}"}}
    assert "--hook-server-url" in data["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]


@pytest.mark.parametrize(("args", "said"), [
    (["--server-url", "ftp://memory.internal/mcp"], "http:// or https://"),
    (["--server-url", "memory.internal:8765"], "http:// or https://"),
    (["--server-url", URL], "go together"),
    (["--token-file", "TOKEN"], "go together"),
])
def test_a_bad_url_or_a_lone_flag_is_refused_and_nothing_written(
        home: Path, token_file: Path, args: list[str], said: str,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(token_file) if a == "TOKEN" else a for a in args]
    if "--token-file" not in args and "go together" not in said:
        args += ["--token-file", str(token_file)]
    assert main(["setup", "claude-code", *args, "--write"]) == 2
    assert said in capsys.readouterr().err
    assert not (home / ".mcp.json").exists() and not (home / ".claude").exists()


def test_a_token_file_others_may_read_is_refused(home: Path, token_file: Path,  # noqa: F811
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    token_file.chmod(0o640)
    assert main(["setup", "claude-code", "--server-url", URL, "--token-file", str(token_file), "--write"]) == 2
    assert f"chmod 600 {token_file}" in capsys.readouterr().err
    assert not (home / ".mcp.json").exists()
    shown = subprocess.run([agent_memory_command(), "token", "header", "--file", str(token_file)],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 2 and shown.stdout == "" and "chmod 600" in shown.stderr
