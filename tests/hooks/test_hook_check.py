"""`agent-memory setup HOST --check`: the installed hooks run against a probe event each, through the
real command line, saying per event what works and what does not, and storing nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hooks.helper import HookRunner


@pytest.fixture
def hooks(tmp_path: Path) -> Iterator[HookRunner]:
    runner = HookRunner(tmp_path / "data")
    runner.env["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir()
    try:
        yield runner
    finally:
        runner.stop()


def agent_memory(hooks: HookRunner, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent_memory", *args], capture_output=True, text=True,
                          timeout=180, env=hooks.env, cwd=project)


EVENTS = {"claude-code": ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"],
          "gemini-cli": ["SessionStart", "BeforeAgent", "AfterAgent", "PreCompress", "SessionEnd"],
          "codex": ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"]}


@pytest.mark.parametrize("host", sorted(EVENTS))
def test_installed_hooks_are_checked_event_by_event(hooks: HookRunner, project: Path, host: str) -> None:
    assert agent_memory(hooks, project, "setup", host, "--write", "--agent-id", "dev", "--team", "red").returncode == 0
    done = agent_memory(hooks, project, "setup", host, "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    events = EVENTS[host]
    lines = done.stdout.splitlines()
    if host == "codex":  # Codex runs none of them until they are trusted, and the check says so
        note = lines.pop()
        assert note.startswith("setup --check: note: Codex has recorded no trust") and "/hooks" in note
    assert [line.split()[0] for line in lines[1:-1]] == events
    assert all(" ok in " in line for line in lines[1:-1]) and lines[-1] == "setup --check: all hooks work"
    listed = agent_memory(hooks, project, "export")
    assert listed.returncode == 0 and listed.stdout == ""  # the probes stored nothing


def test_a_broken_or_missing_hook_is_named(hooks: HookRunner, project: Path) -> None:
    missing = agent_memory(hooks, project, "setup", "claude-code", "--check")
    assert missing.returncode == 1 and "setup claude-code --write" in missing.stdout
    assert agent_memory(hooks, project, "setup", "claude-code", "--write").returncode == 0
    settings = project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    prompt = data["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    prompt["command"] += " --system-type sys9"  # an invalid setting: the helper refuses to start
    del data["hooks"]["PreCompact"]
    settings.write_text(json.dumps(data))
    done = agent_memory(hooks, project, "setup", "claude-code", "--check")
    assert done.returncode == 1
    by_event = {line.split()[0]: line for line in done.stdout.splitlines()[1:-1]}
    assert "FAILED" in by_event["UserPromptSubmit"] and "sys9" in by_event["UserPromptSubmit"]
    assert "missing" in by_event["PreCompact"] and " ok in " in by_event["Stop"]
    assert done.stdout.splitlines()[-1].startswith("setup --check: 2 not working")


def test_check_is_for_hosts_with_hooks(hooks: HookRunner, project: Path) -> None:
    done = agent_memory(hooks, project, "setup", "cursor", "--check")
    assert done.returncode == 2 and "--check is for claude-code, gemini-cli, codex only" in done.stderr
