"""The real Codex CLI (pinned, npm-installed into the test cache) against a stand-in for the
Responses API on 127.0.0.1, with the MCP server and hooks `agent-memory setup codex --write` wrote
(user scope, in a scratch HOME): a decision and a preference said in one session reach the model in
a later, related one as recalled memory, with the memory tools listed; what the model saves with
the tools is recalled in the same project; an unrelated prompt gets no recall of its own; a secret
said in passing is stored nowhere and sent nowhere again; and hooks nobody has trusted do not run.
Skipped, saying why, only where node/npm are missing or the npm registry is unreachable."""

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

from tests.e2e.responses_standin import provider_config, responses_standin
from tests.hooks.conftest import checkout
from tests.hooks.helper import HookRunner
from tests.npm_cache import UNREACHABLE, node_script

CODEX = "@openai/codex@0.171.0"
SECRET = "ghp_" + "Q4w8Er2Ty6Ui0Op3As7Df1Gh5Jk9Lz2Xc4V"  # a GitHub token's shape, not a real one
TOOLS = {"memory_crud", "memory_retrieve", "memory_reflect"}


@pytest.fixture(scope="module")
def codex() -> list[str]:
    found, why = node_script(CODEX, "node_modules/.bin/codex")
    if found is None:
        if shutil.which("npm") is None or why.startswith(UNREACHABLE):
            pytest.skip(f"the Codex CLI needs npm and its registry: {why}")
        pytest.fail(f"could not install {CODEX}: {why}")
    return found


@pytest.fixture
def hooks(tmp_path: Path) -> Iterator[HookRunner]:
    runner = HookRunner(tmp_path / "data", vector_backend="chroma")
    try:
        yield runner
    finally:
        runner.stop()


def _developer(request: dict) -> list[str]:
    """The developer messages of a request (where Codex puts what hooks add), in order."""
    return [part.get("text", "") for item in request.get("input", []) if item.get("role") == "developer"
            for part in item.get("content", []) if isinstance(part, dict)]


def _after_prompt(request: dict, prompt: str) -> str:
    """The developer message right after the user's prompt: what the UserPromptSubmit hook added."""
    items = request.get("input", [])
    for at, item in enumerate(items):
        texts = [p.get("text") for p in item.get("content", []) if isinstance(p, dict)]
        if item.get("role") == "user" and prompt in texts and at + 1 < len(items):
            after = items[at + 1]
            if after.get("role") == "developer":
                return " ".join(p.get("text", "") for p in after.get("content", []))
    return ""


def _tools(request: dict) -> set[str]:
    return {tool.get("name") for space in request.get("tools", []) if space.get("name") == "mcp__agent_memory"
            for tool in space.get("tools", [])}


def distilled(env: dict[str, str], tmp_path: Path, word: str) -> bool:
    """Whether reflection has distilled a long-term fact holding `word` (not only the logged turns)."""
    return any(json.loads(line).get("layer") == "long_term" and word in json.loads(line).get("content", "")
               for line in _export(env, tmp_path).splitlines() if line.strip())


def _export(env: dict[str, str], tmp_path: Path) -> str:
    out = tmp_path / "export.jsonl"
    done = subprocess.run([sys.executable, "-m", "agent_memory", "export", "--output", str(out)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return out.read_text()


def test_memory_reaches_the_model_in_a_later_codex_session(codex: list[str], hooks: HookRunner,
                                                           tmp_path: Path) -> None:
    project = checkout(tmp_path / "shop-api")
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    env = {**hooks.env, "HOME": str(home), "PATH": os.environ.get("PATH", ""), "STANDIN_KEY": "dummy"}
    env.pop("CODEX_HOME", None)
    with responses_standin() as (standin, port):
        config = home / ".codex" / "config.toml"
        config.write_text(provider_config(port))
        done = subprocess.run([sys.executable, "-m", "agent_memory", "setup", "codex", "--scope", "user", "--write"],
                              cwd=project, capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        text = config.read_text()
        assert text.startswith(provider_config(port))  # the user's settings kept as they were
        # This checkout's code for the server too (Codex passes a server only the variables it names).
        config.write_text(text.replace("env_vars = [", 'env_vars = ["PYTHONPATH", '))

        def ask(prompt: str, *, trusted: bool = True, approve: bool = False) -> list[dict]:
            before = len(standin.requests)
            # required: Codex waits for the server's tools instead of its 1 s grace for optional servers
            flags = ["--dangerously-bypass-hook-trust"] if trusted else []
            if approve:  # `codex exec` asks no one: a tool call needing approval fails
                flags += ["-c", 'mcp_servers.agent-memory.default_tools_approval_mode="approve"']
            done = subprocess.run([*codex, "exec", "--skip-git-repo-check", *flags, "-c",
                                   "mcp_servers.agent-memory.required=true", prompt],
                                  cwd=project, capture_output=True, text=True, env=env, timeout=180)
            assert done.returncode == 0, (done.stdout, done.stderr[-3000:])
            assert "Noted." in done.stdout
            return standin.since(before)

        first = ask("For this repo: I prefer tabs over spaces for indentation in Go files. We decided to deploy "
                    f"the shop API only on Tuesdays. The staging token is {SECRET} if you need it.")
        assert first and TOOLS <= _tools(first[0]), [t.get("name") for t in first[0].get("tools", [])]
        # SessionEnd logged the session and reflected it (the helper may still be working).
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not distilled(env, tmp_path, "Tuesdays"):
            time.sleep(0.5)
        stored = _export(env, tmp_path)
        assert "tabs over spaces" in stored and "Tuesdays" in stored
        assert SECRET not in stored and "[REDACTED" in stored

        prompt = "Which indentation should I use in the new Go file?"
        related = ask(prompt)
        added = _after_prompt(related[0], prompt)
        assert added.startswith("<recalled-memory") and "tabs over spaces" in added, _developer(related[0])
        assert TOOLS <= _tools(related[0])
        said = json.dumps(related)
        assert SECRET not in said

        prompt = "What is the boiling point of water at sea level in Kelvin?"
        unrelated = ask(prompt)
        assert _after_prompt(unrelated[0], prompt) == ""
        assert SECRET not in json.dumps(unrelated)

        # What the model saves with the tools lands in the project the hooks recall from.
        standin.call("mcp__agent_memory", "memory_crud", {"action": "create", "items": [
            {"content": "We decided to deploy with the helm chart orbit-v3."}]})
        saved = ask("Save our deploy decision.", approve=True)
        result = next(item["output"] for r in saved for item in r["input"]
                      if item.get("type") == "function_call_output")
        assert '"namespace":"codex/shop-api-' in result.replace(" ", ""), result
        prompt = "Which helm chart do we deploy with?"
        assert "orbit-v3" in _after_prompt(ask(prompt)[0], prompt)

        untrusted = ask("Which indentation should I use in the new Go file?", trusted=False)
        assert not any("recalled-memory" in text for text in _developer(untrusted[0]))  # no hook ran
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
