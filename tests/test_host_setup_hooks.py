"""`agent-memory setup claude-code|gemini-cli`: the MCP server plus hooks running `agent-memory hook
HOST`, printed, or merged into the host's files (a temporary HOME and project here), keeping every
other hook, replacing an older agent-memory hook, never adding ours twice, backing files up."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from agent_memory.cli.host_hooks import hook_command, is_ours
from agent_memory.cli.main import _parser, main
from tests.e2e.servers import agent_memory_command
from tests.test_host_setup import home  # noqa: F401 - the fixture

CLAUDE_EVENTS = {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 10, "PreCompact": 10, "SessionEnd": 15}
GEMINI_EVENTS = {"SessionStart": 10_000, "BeforeAgent": 5_000, "AfterAgent": 10_000, "PreCompress": 10_000,
                 "SessionEnd": 15_000}
OTHER_HOOK = {"type": "command", "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/lint.sh", "timeout": 30}


def installed() -> str:
    return str(Path(agent_memory_command()).resolve())


def ours(host: str, timeout: int, agent_id: str | None = None, team: str = "default") -> dict:
    """Our hook entry; its command carries the identity the MCP server entry gets (one agent)."""
    identity = f"--agent-id {agent_id or host} --system-type sys1 --team {team}"
    hook = {"type": "command", "command": f"{installed()} hook {host} {identity}", "timeout": timeout}
    if host == "gemini-cli":
        return {"hooks": [{"name": "agent-memory", **hook}]}
    return {"matcher": "", "hooks": [hook]}


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_printed_claude_code_config_names_both_project_files(home: Path,  # noqa: F811
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["setup", "claude-code", "--agent-id", "coder", "--team", "shop"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert list(printed) == [str(home / ".mcp.json"), str(home / ".claude" / "settings.json")]
    server = printed[str(home / ".mcp.json")]["mcpServers"]["agent-memory"]
    assert server["type"] == "stdio" and server["command"] == installed()
    options = _parser().parse_args(server["args"])
    assert (options.command, options.agent_id, options.team) == ("serve", "coder", "shop")
    # The hooks capture (the model is not asked to) in the host's project:
    assert server["args"][-4:] == ["--hooks-capture", "true", "--project", "auto"]
    hooks = printed[str(home / ".claude" / "settings.json")]["hooks"]
    assert hooks == {event: [ours("claude-code", timeout, "coder", "shop")] for event, timeout in CLAUDE_EVENTS.items()}
    assert not list(home.iterdir())  # printing writes nothing


def test_write_merges_claude_code_project_files_keeping_other_hooks(home: Path,  # noqa: F811
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    older = {"type": "command", "command": "/old/venv/bin/agent-memory hook claude-code", "timeout": 3}
    original = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [OTHER_HOOK]}],
            "UserPromptSubmit": [{"hooks": [OTHER_HOOK]},
                                 {"hooks": [{"type": "mcp_tool", "server": "agent-memory", "tool": "memory_retrieve",
                                             "input": {"query": "${prompt}"}}]}],
            "SessionStart": [{"matcher": "startup", "hooks": [OTHER_HOOK, older]}, {"matcher": "", "hooks": [older]}],
        },
    }
    settings.write_text(json.dumps(original))
    (home / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "/bin/other"}}}))
    assert main(["setup", "claude-code", "--write"]) == 0
    err = capsys.readouterr().err
    assert f"added server 'agent-memory' in {home / '.mcp.json'}" in err
    assert f"replaced hooks on SessionStart, UserPromptSubmit, Stop, PreCompact, SessionEnd in {settings}" in err
    merged = load(settings)
    assert merged["permissions"] == original["permissions"]
    hooks = merged["hooks"]
    assert hooks["PreToolUse"] == original["hooks"]["PreToolUse"]
    # The older agent-memory hooks are gone, ours stand where the first of them was; the rest stays.
    assert hooks["SessionStart"] == [ours("claude-code", 10), {"matcher": "startup", "hooks": [OTHER_HOOK]}]
    assert hooks["UserPromptSubmit"] == [{"hooks": [OTHER_HOOK]}, ours("claude-code", 5)]
    for event in ("Stop", "PreCompact", "SessionEnd"):
        assert hooks[event] == [ours("claude-code", CLAUDE_EVENTS[event])]
    assert load(home / ".mcp.json")["mcpServers"]["other"] == {"command": "/bin/other"}
    assert load(home / ".claude" / "settings.json.bak") == original
    assert (home / ".mcp.json.bak").exists()
    # Again: nothing to change, nothing written, no second backup.
    assert main(["setup", "claude-code", "--write"]) == 0
    err = capsys.readouterr().err
    assert err.count("already has this") == 2 and load(settings) == merged
    assert sorted(p.name for p in home.rglob("*.bak*")) == [".mcp.json.bak", "settings.json.bak"]


def test_write_at_user_scope_uses_the_home_files(home: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    state = {"numStartups": 12, "projects": {"/home/you/shop": {"mcpServers": {}}}, "mcpServers": {}}
    (home / ".claude.json").write_text(json.dumps(state))
    project = home / "shop"
    project.mkdir()
    assert main(["setup", "claude-code", "--scope", "user", "--write", "--agent-id", "me"]) == 0
    claude = load(home / ".claude.json")
    assert claude["numStartups"] == 12 and claude["projects"] == state["projects"]
    assert claude["mcpServers"]["agent-memory"]["args"][2] == "me"
    assert set(load(home / ".claude" / "settings.json")["hooks"]) == set(CLAUDE_EVENTS)
    assert not (home / ".mcp.json").exists() and not list(project.iterdir())


@pytest.mark.parametrize("text", ['{\n  // mine\n  "hooks": {}\n}', '{"hooks": []}', '{"hooks": {"Stop": {}}}'])
def test_a_settings_file_it_cannot_merge_stops_both_writes(home: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
                                                          text: str) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(text)
    assert main(["setup", "claude-code", "--write"]) == 1
    err = capsys.readouterr().err
    assert "nothing written" in err and "Traceback" not in err
    assert settings.read_text() == text and not (home / ".mcp.json").exists()
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def test_gemini_cli_gets_server_and_hooks_in_one_settings_file(home: Path,  # noqa: F811
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    other = {"matcher": "", "hooks": [{"name": "ctx", "type": "command", "command": "./ctx.sh"}]}
    original = {"theme": "GitHub", "hooksConfig": {"enabled": False}, "mcpServers": {"other": {"command": "/bin/o"}},
                "hooks": {"BeforeAgent": [other], "disabled": ["ctx"]}}
    settings.write_text(json.dumps(original))
    assert main(["setup", "gemini-cli", "--write"]) == 0
    err = capsys.readouterr().err
    assert f"added server 'agent-memory' and added hooks on SessionStart, BeforeAgent, AfterAgent, PreCompress, " \
           f"SessionEnd in {settings}" in err
    assert "hooks are switched off" in err
    merged = load(settings)
    assert merged["theme"] == "GitHub" and merged["hooksConfig"] == {"enabled": False}
    assert set(merged["mcpServers"]) == {"other", "agent-memory"} and "type" not in merged["mcpServers"]["agent-memory"]
    assert merged["mcpServers"]["agent-memory"]["args"][-4:] == ["--hooks-capture", "true", "--project", "auto"]
    assert merged["hooks"]["disabled"] == ["ctx"]
    assert merged["hooks"]["BeforeAgent"] == [other, ours("gemini-cli", 5_000)]
    for event in ("SessionStart", "AfterAgent", "PreCompress", "SessionEnd"):
        assert merged["hooks"][event] == [ours("gemini-cli", GEMINI_EVENTS[event])]
    assert load(settings.with_name("settings.json.bak")) == original
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json", "settings.json.bak"]
    # The user scope, and --file, name the one file.
    assert main(["setup", "gemini-cli", "--scope", "user", "--write"]) == 0
    assert main(["setup", "gemini-cli", "--write", "--file", str(home / "elsewhere.json")]) == 0
    assert set(load(home / "elsewhere.json")) == {"mcpServers", "hooks"}


def test_scope_and_file_are_refused_where_they_do_not_apply(home: Path,  # noqa: F811
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["setup", "claude-code", "--write", "--file", str(home / "x.json")]) == 2
    assert "uses two" in capsys.readouterr().err
    assert main(["setup", "cursor", "--scope", "user"]) == 2
    assert "--scope is for claude-code, gemini-cli, codex only" in capsys.readouterr().err
    assert not list(home.iterdir())


@pytest.mark.parametrize(("hook", "expected"), [
    ({"type": "command", "command": "/opt/am/.venv/bin/agent-memory hook claude-code"}, True),
    ({"type": "command", "command": "'/Users/me/My Tools/agent-memory' hook gemini-cli", "timeout": 5}, True),
    ({"type": "command", "command": "/usr/bin/python3 -m agent_memory hook claude-code"}, True),
    ({"type": "mcp_tool", "server": "agent-memory", "tool": "memory_retrieve"}, True),
    ({"type": "mcp_tool", "server": "github", "tool": "search"}, False),
    ({"type": "command", "command": "/opt/am/.venv/bin/agent-memory serve"}, False),
    ({"type": "command", "command": "/bin/my-agent-memory hook claude-code"}, False),
    ({"type": "command", "command": "echo agent-memory hook"}, False),
    ({"type": "command", "command": "'unbalanced agent-memory hook"}, False),
    ({"type": "prompt", "prompt": "agent-memory hook"}, False), (["agent-memory", "hook"], False),
    ("agent-memory hook", False),
])
def test_which_hooks_are_agent_memorys(hook: object, expected: bool) -> None:
    assert is_ours(hook, "agent-memory") is expected


def test_the_hook_command_quotes_a_path_with_spaces() -> None:
    command = hook_command(["/Users/me/My Tools/agent-memory"], "claude-code")
    assert shlex.split(command) == ["/Users/me/My Tools/agent-memory", "hook", "claude-code"]
    assert is_ours({"type": "command", "command": command}, "agent-memory")
    assert hook_command(["/usr/bin/python3", "-m", "agent_memory"], "gemini-cli") == \
        "/usr/bin/python3 -m agent_memory hook gemini-cli"
