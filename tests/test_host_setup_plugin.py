"""`agent-memory setup claude-code --plugin DIR`: a local marketplace at DIR listing a Claude Code
plugin that carries exactly what `setup claude-code` merges into a project (the same server entry,
the same hooks, events and timeouts), printed or written; a marketplace of the user's keeps its name
and its other plugins. The real CLI validates and installs it in tests/e2e/test_claude_code_plugin.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_memory import __version__
from agent_memory.cli.main import main
from tests.test_host_setup import home  # noqa: F401 - the fixture
from tests.test_host_setup_hooks import CLAUDE_EVENTS, ours

FILES = [".claude-plugin/marketplace.json", "plugins/agent-memory/.claude-plugin/plugin.json",
         "plugins/agent-memory/.mcp.json", "plugins/agent-memory/hooks/hooks.json"]


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_the_plugin_carries_what_setup_claude_code_writes(home: Path,  # noqa: F811
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    root = home / "market"
    assert main(["setup", "claude-code", "--plugin", str(root), "--agent-id", "coder", "--team", "shop"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert sorted(printed) == sorted(str(root / f) for f in FILES) and not root.exists()  # printing writes nothing
    assert main(["setup", "claude-code", "--plugin", str(root), "--agent-id", "coder", "--team", "shop",
                 "--write"]) == 0
    err = capsys.readouterr().err
    assert f"claude plugin install agent-memory --marketplace {root}" in err
    assert files(root) == FILES
    assert {str(root / f): load(root / f) for f in FILES} == printed
    plugin = root / "plugins" / "agent-memory"
    market = load(root / ".claude-plugin" / "marketplace.json")
    assert market["name"] == "agent-memory-local" and market["owner"] == {"name": "agent-memory"}
    assert [(p["name"], p["source"], p["version"]) for p in market["plugins"]] == [
        ("agent-memory", "./plugins/agent-memory", __version__)]
    assert load(plugin / ".claude-plugin" / "plugin.json")["name"] == "agent-memory"
    hooks = load(plugin / "hooks" / "hooks.json")["hooks"]
    assert hooks == {event: [ours("claude-code", timeout, "coder", "shop")] for event, timeout in CLAUDE_EVENTS.items()}
    # The server entry is the one `setup claude-code` merges into .mcp.json.
    assert main(["setup", "claude-code", "--agent-id", "coder", "--team", "shop"]) == 0
    project = json.loads(capsys.readouterr().out)
    assert load(plugin / ".mcp.json") == project[str(home / ".mcp.json")]
    # Again: nothing changes, nothing is backed up.
    assert main(["setup", "claude-code", "--plugin", str(root), "--agent-id", "coder", "--team", "shop",
                 "--write"]) == 0
    assert capsys.readouterr().err.count("left as it is") == 4 and files(root) == FILES


def test_a_marketplace_of_the_users_keeps_its_name_and_plugins(home: Path,  # noqa: F811
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    root = home / "team-market"
    (root / ".claude-plugin").mkdir(parents=True)
    theirs = {"name": "team-tools", "owner": {"name": "Platform"},
              "plugins": [{"name": "lint", "source": "./plugins/lint"},
                          {"name": "agent-memory", "source": "./old", "category": "memory"}]}
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(theirs))
    assert main(["setup", "claude-code", "--plugin", str(root), "--write"]) == 0
    market = load(root / ".claude-plugin" / "marketplace.json")
    assert market["name"] == "team-tools" and market["owner"] == {"name": "Platform"}
    assert market["plugins"][0] == theirs["plugins"][0]
    assert market["plugins"][1]["source"] == "./plugins/agent-memory" and market["plugins"][1]["category"] == "memory"
    assert load(root / ".claude-plugin" / "marketplace.json.bak") == theirs


@pytest.mark.parametrize(("args", "said"), [
    (["setup", "gemini-cli", "--plugin", "x"], "--plugin is for claude-code"),
    (["setup", "claude-code", "--plugin", "x", "--scope", "user"], "--plugin is for claude-code, without"),
    (["setup", "claude-code", "--plugin", "x", "--check"], "--plugin is for claude-code, without"),
    (["setup", "claude-code", "--plugin", "x", "--name", "Agent Memory"], "plugin's name"),
])
def test_plugin_arguments_that_do_not_fit_are_refused(home: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
                                                      args: list[str], said: str) -> None:
    assert main(args) == 2
    assert said in capsys.readouterr().err and not list(home.iterdir())


def test_a_marketplace_file_it_cannot_merge_stops_every_write(home: Path,  # noqa: F811
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = home / "market"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "marketplace.json").write_text('{"plugins": {}}')
    assert main(["setup", "claude-code", "--plugin", str(root), "--write"]) == 1
    assert "nothing written" in capsys.readouterr().err
    assert files(root) == [".claude-plugin/marketplace.json"]
