"""The real Claude Code CLI (pinned, npm-installed into the test cache) against a stand-in model
API on 127.0.0.1, with the MCP server and hooks `agent-memory setup claude-code --write` wrote:
a preference and a decision stated in one session reach the model in a later, related one,
framed as recalled memory; an unrelated prompt gets none; a secret said in passing is stored
nowhere and sent nowhere again. Skipped, saying why, only where node/npm are missing or the npm
registry is unreachable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.model_standin import model_standin
from tests.hooks.conftest import checkout
from tests.hooks.helper import HookRunner
from tests.npm_cache import UNREACHABLE, node_script

CLAUDE = "@anthropic-ai/claude-code@2.1.332"
SECRET = "ghp_" + "Z7q2Xk9LmP4vR8tY3wN6bC1dF5gH0jK2sA9e"  # a GitHub token's shape, not a real one
QUIET = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
         "DISABLE_ERROR_REPORTING": "1", "ANTHROPIC_API_KEY": "dummy"}


@pytest.fixture(scope="module")
def claude() -> str:
    found, why = node_script(CLAUDE, "node_modules/.bin/claude")
    if found is None:
        if shutil.which("npm") is None or why.startswith(UNREACHABLE):
            pytest.skip(f"the Claude Code CLI needs npm and its registry: {why}")
        pytest.fail(f"could not install {CLAUDE}: {why}")
    return found[1]


@pytest.fixture
def hooks(tmp_path: Path) -> Iterator[HookRunner]:
    runner = HookRunner(tmp_path / "data", vector_backend="chroma")
    try:
        yield runner
    finally:
        runner.stop()


def _said(request: dict) -> str:
    """Everything a request tells the model (messages and system prompt) as one text."""
    return json.dumps(request.get("messages", [])) + json.dumps(request.get("system", ""))


def distilled(env: dict[str, str], tmp_path: Path, word: str) -> bool:
    """Whether reflection has distilled a long-term fact holding `word` (the session's own turns
    hold it as soon as Stop logs them; the facts come with SessionEnd's reflection)."""
    return any(json.loads(line).get("layer") == "long_term" and word in json.loads(line).get("content", "")
               for line in _export(env, tmp_path).splitlines() if line.strip())


def _export(env: dict[str, str], tmp_path: Path) -> str:
    out = tmp_path / "export.jsonl"
    done = subprocess.run([sys.executable, "-m", "agent_memory", "export", "--output", str(out)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return out.read_text()


def test_memory_reaches_the_model_in_a_later_session_by_itself(claude: str, hooks: HookRunner,
                                                               tmp_path: Path) -> None:
    project = tmp_path / "shop-api"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    env = {**hooks.env, "HOME": str(home), "PATH": os.environ.get("PATH", "")}
    done = subprocess.run([sys.executable, "-m", "agent_memory", "setup", "claude-code", "--write"],
                          cwd=project, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"} <= set(settings["hooks"])
    assert (project / ".mcp.json").exists()

    with model_standin() as (standin, port):
        run_env = {**env, **QUIET, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"}

        def ask(prompt: str) -> list[dict]:
            before = len(standin.requests)
            done = subprocess.run([claude, "-p", prompt], cwd=project, capture_output=True, text=True,
                                  env=run_env, timeout=120)
            assert done.returncode == 0, (done.stdout, done.stderr)
            assert "Noted." in done.stdout
            return standin.since(before)

        ask("For this repo: I prefer tabs over spaces for indentation in Go files. We decided to deploy the "
            f"shop API only on Tuesdays. The staging token is {SECRET} if you need it.")
        # SessionEnd logged the session and reflected it; wait for the facts (the helper may still work).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not distilled(env, tmp_path, "Tuesdays"):
            time.sleep(0.5)
        stored = _export(env, tmp_path)
        assert "tabs over spaces" in stored and "Tuesdays" in stored
        assert SECRET not in stored and "[REDACTED" in stored

        related = ask("Which indentation should I use in the new Go file?")
        assert related, "the CLI sent no request to the model"
        said = "\n".join(_said(r) for r in related)
        assert "UserPromptSubmit hook additional context" in said, said[:2000]
        assert "recalled-memory" in said and "tabs over spaces" in said
        assert SECRET not in said

        unrelated = ask("What is the boiling point of water at sea level in Kelvin?")
        said = "\n".join(_said(r) for r in unrelated)
        assert "UserPromptSubmit hook additional context" not in said
        assert SECRET not in said
    # Nowhere in the store's files either (the database, its journal, the vector index).
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_what_the_model_saves_in_one_project_reaches_no_other(claude: str, hooks: HookRunner, tmp_path: Path) -> None:
    """Two checkouts named `app` of two repositories, each set up by `setup claude-code --write`:
    a decision the model saves with memory_crud in one (no namespace: the project's) is in no
    request the CLI sends from the other; a preference it saves agent-wide is."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**hooks.env, "HOME": str(home), "PATH": os.environ.get("PATH", "")}
    ours = checkout(tmp_path / "a" / "app", remote="git@example.com:acme/app.git")
    theirs = checkout(tmp_path / "b" / "app", remote="git@example.com:other/app.git")
    for project in (ours, theirs):
        done = subprocess.run([sys.executable, "-m", "agent_memory", "setup", "claude-code", "--write"],
                              cwd=project, capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
    crud = "mcp__agent-memory__memory_crud"
    with model_standin() as (standin, port):
        run_env = {**env, **QUIET, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ENABLE_TOOL_SEARCH": "false"}

        def ask(project: Path, prompt: str) -> list[dict]:
            before = len(standin.requests)
            done = subprocess.run([claude, "-p", prompt, "--allowedTools", crud], cwd=project, capture_output=True,
                                  text=True, env=run_env, timeout=120)
            assert done.returncode == 0, (done.stdout, done.stderr)
            return standin.since(before)

        standin.call(crud, {"action": "create", "items": [{"content": "We decided to deploy with the helm chart "
                                                                      "orbit-v3."}]})
        standin.call(crud, {"action": "create", "namespace": "claude-code",
                            "items": [{"content": "The user prefers answers in British English.", "layer": "meta"}]})
        sent = ask(ours, "Save our deploy decision, and that I prefer British English everywhere.")
        results = list({block["tool_use_id"]: block for r in sent for m in r["messages"]
                        if isinstance(m.get("content"), list)
                        for block in m["content"] if block.get("type") == "tool_result"}.values())
        saved = [json.loads(r["content"] if isinstance(r["content"], str) else r["content"][0]["text"])["items"][0]
                 for r in results]
        assert len(saved) == 2, results
        assert saved[0]["namespace"].startswith("claude-code/app-") and saved[1]["namespace"] == "claude-code"

        later = ask(theirs, "Which helm chart do we deploy with, and which English should answers use?")
        said = "\n".join(_said(r) for r in later)
        assert "orbit-v3" not in said
        assert "British English" in said and "standing-rules" in said
        back = "\n".join(_said(r) for r in ask(ours, "Which helm chart do we deploy with?"))
        assert "orbit-v3" in back
