"""`agent-memory setup codex`: the MCP server as a `[mcp_servers.<name>]` table in Codex's TOML
`config.toml` and the hooks running `agent-memory hook codex` in its `hooks.json`, printed, or merged
(a temporary HOME and project here): every other setting, comment and hook kept, an older
agent-memory entry replaced, files backed up, and a file it cannot merge safely left untouched."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from agent_memory.cli.hook_check import trusted
from agent_memory.cli.main import _parser, main
from tests.e2e.servers import agent_memory_command
from tests.test_host_setup import home  # noqa: F401 - the fixture

CODEX_EVENTS = {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 10, "PreCompact": 10, "SessionEnd": 3}
OTHER_HOOK = {"type": "command", "command": "python3 .codex/hooks/lint.py", "timeout": 30, "statusMessage": "lint"}
CONFIG = '''# my Codex settings
model = "gpt-5.5"  # the one I pay for
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[mcp_servers.agent-memory]
command = "/old/venv/bin/agent-memory"
args = ["serve"]

[mcp_servers.agent-memory.env]
MEMORY_TEAM = "old"

# profiles I switch between
[profiles.fast]
model = "gpt-5.5-mini"

[projects."/home/you/shop"]
trust_level = "trusted"
'''


def installed() -> str:
    return str(Path(agent_memory_command()).resolve())


def ours(timeout: int, agent_id: str = "codex", team: str = "default") -> dict:
    command = f"{installed()} hook codex --agent-id {agent_id} --system-type sys1 --team {team}"
    return {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}


def _printed(out: str) -> dict[str, str]:
    """The printed fragments by the file each is for (each under a `# <path>` line)."""
    parts: dict[str, str] = {}
    current = None
    for line in out.splitlines(keepends=True):
        if line.startswith("# /"):
            current = line[2:].strip()
            parts[current] = ""
        elif current is not None:
            parts[current] += line
    return parts


def test_printed_config_is_a_toml_table_and_the_hooks_json(home: Path,  # noqa: F811
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["setup", "codex", "--agent-id", "coder", "--team", "shop"]) == 0
    out, err = capsys.readouterr()
    parts = _printed(out)
    config, hooks_file = home / ".codex" / "config.toml", home / ".codex" / "hooks.json"
    assert list(parts) == [str(config), str(hooks_file)]
    server = tomllib.loads(parts[str(config)])["mcp_servers"]["agent-memory"]
    assert server["command"] == installed() and "type" not in server
    options = _parser().parse_args(server["args"])
    assert (options.command, options.agent_id, options.team) == ("serve", "coder", "shop")
    assert server["args"][-4:] == ["--hooks-capture", "true", "--project", "auto"]
    # Codex passes a server only HOME, PATH and a few more: agent-memory's own variables are named.
    assert {"MEMORY_CONFIG", "MEMORY_DATA_DIR", "MEMORY_VECTOR_BACKEND", "XDG_DATA_HOME"} <= set(server["env_vars"])
    hooks = json.loads(parts[str(hooks_file)])["hooks"]
    assert hooks == {event: [ours(timeout, "coder", "shop")] for event, timeout in CODEX_EVENTS.items()}
    assert "/hooks" in err and "trusted" in err  # Codex runs no hook until it is trusted
    assert not list(home.iterdir())  # printing writes nothing


def test_write_merges_config_toml_keeping_every_other_line_and_hook(home: Path,  # noqa: F811
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    folder = home / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text(CONFIG)
    older = {"type": "command", "command": "/old/venv/bin/agent-memory hook codex", "timeout": 3}
    original_hooks = {"hooks": {"UserPromptSubmit": [{"hooks": [OTHER_HOOK]}, {"hooks": [older]}],
                                "PreToolUse": [{"matcher": "Bash", "hooks": [OTHER_HOOK]}]}}
    (folder / "hooks.json").write_text(json.dumps(original_hooks))
    assert main(["setup", "codex", "--write"]) == 0
    err = capsys.readouterr().err
    assert f"replaced server 'agent-memory' in {folder / 'config.toml'}" in err
    events = ", ".join(CODEX_EVENTS)
    assert f"replaced hooks on {events} in {folder / 'hooks.json'}" in err
    text = (folder / "config.toml").read_text()
    merged = tomllib.loads(text)
    before = tomllib.loads(CONFIG)
    assert {k: v for k, v in merged.items() if k != "mcp_servers"} == {k: v for k, v in before.items()
                                                                       if k != "mcp_servers"}
    assert merged["mcp_servers"]["docs"] == before["mcp_servers"]["docs"]
    server = merged["mcp_servers"]["agent-memory"]
    assert server["command"] == installed() and "env" not in server  # the old table and its subtable are gone
    # The comments and the layout around it stay, the server stands where the old one stood.
    for line in ("# my Codex settings", 'model = "gpt-5.5"  # the one I pay for', "# profiles I switch between"):
        assert line in text
    assert text.index("[mcp_servers.docs]") < text.index("[mcp_servers.agent-memory]") < text.index("[profiles.fast]")
    assert text.index("# profiles I switch between") < text.index("[profiles.fast]")
    hooks = json.loads((folder / "hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"] == original_hooks["hooks"]["PreToolUse"]
    assert hooks["UserPromptSubmit"] == [{"hooks": [OTHER_HOOK]}, ours(5)]
    assert (folder / "config.toml.bak").read_text() == CONFIG
    assert json.loads((folder / "hooks.json.bak").read_text()) == original_hooks
    # Again: nothing to change, nothing written, no second backup.
    assert main(["setup", "codex", "--write"]) == 0
    assert capsys.readouterr().err.count("left as it is") == 2
    assert (folder / "config.toml").read_text() == text
    assert sorted(p.name for p in folder.iterdir()) == ["config.toml", "config.toml.bak", "hooks.json",
                                                        "hooks.json.bak"]


def test_user_scope_is_codex_home(home: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["setup", "codex", "--scope", "user", "--write", "--agent-id", "me"]) == 0
    servers = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]
    assert servers["agent-memory"]["args"][2] == "me"
    assert set(json.loads((home / ".codex" / "hooks.json").read_text())["hooks"]) == set(CODEX_EVENTS)
    elsewhere = home / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(elsewhere))
    assert main(["setup", "codex", "--scope", "user", "--write"]) == 0
    assert sorted(p.name for p in elsewhere.iterdir()) == ["config.toml", "hooks.json"]
    assert "project you trusted" not in capsys.readouterr().err  # that note is for the project scope


@pytest.mark.parametrize("text", [
    'model = "x"\n[mcp_servers\n',  # not TOML
    'mcp_servers = ["a"]\n',  # not a table
    '[mcp_servers]\nagent-memory = { command = "/old" }\n',  # the server inline: not edited by hand-made text
    'mcp_servers.agent-memory.command = "/old"\n',  # as dotted keys
])
def test_a_config_it_cannot_merge_safely_stops_both_writes(home: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
                                                          text: str) -> None:
    folder = home / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text(text)
    assert main(["setup", "codex", "--write"]) == 1
    err = capsys.readouterr().err
    assert "nothing written" in err and "Traceback" not in err
    assert (folder / "config.toml").read_text() == text
    assert sorted(p.name for p in folder.iterdir()) == ["config.toml"]


def test_a_hooks_file_it_cannot_merge_stops_both_writes(home: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
                                                        ) -> None:
    folder = home / ".codex"
    folder.mkdir()
    (folder / "hooks.json").write_text('{"hooks": []}')
    assert main(["setup", "codex", "--write"]) == 1
    assert "nothing written" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == ["hooks.json"]


def test_names_and_values_are_written_as_toml_reads_them(home: Path) -> None:  # noqa: F811
    assert main(["setup", "codex", "--write", "--name", "memory.v2", "--team", "ops"]) == 0
    assert main(["setup", "codex", "--write", "--name", "memory.v2", "--team", "ops"]) == 0  # found again: replaced
    servers = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]
    assert list(servers) == ["memory.v2"] and servers["memory.v2"]["args"][6] == "ops"


def test_file_is_refused_for_two_files(home: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    assert main(["setup", "codex", "--write", "--file", str(home / "x.toml")]) == 2
    assert "uses two" in capsys.readouterr().err and not list(home.iterdir())


def test_trust_is_read_from_codex_state(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    hooks_file = home / ".codex" / "hooks.json"
    assert not trusted(hooks_file)
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        f'[hooks.state."{hooks_file}:user_prompt_submit:0:0"]\ntrusted_hash = "sha256:00"\n')
    assert trusted(hooks_file) and not trusted(home / "other" / "hooks.json")
