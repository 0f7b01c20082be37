"""A tool stub of Claude Code's transcript (agent_memory.hooks.transcript) is redacted before it is
cut to TOOL_INPUT_CHARS / TOOL_RESULT_CHARS: a key that straddles the cut never leaves a part."""

from __future__ import annotations

import json

import pytest

from agent_memory.hooks.transcript import TOOL_INPUT_CHARS, TOOL_RESULT_CHARS, parse_lines

# Fake, format-valid values (never real ones).
GITHUB = "ghp_" + "Zq4T8mW2xL9pR3vB7nK1cY6hJ5dF0sG2aE8u"
PASSWORD = "Harbor#Mist9Quill"


def parts(value: str, least: int = 6) -> list[str]:
    """Every piece of `value` at least `least` characters long."""
    return [value[i:j] for i in range(len(value)) for j in range(i + least, len(value) + 1)]


def stubs(command: str, result: str) -> tuple[str, str]:
    turns = parse_lines([
        json.dumps({"type": "assistant", "message": {"id": "m1", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}}]}}),
        json.dumps({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": result}]}}),
    ])
    return turns[0].content, turns[1].content


@pytest.mark.parametrize("offset", [-30, -12, -4, -1, 0])
def test_a_key_straddling_the_cut_leaves_no_part_of_itself(offset: int) -> None:
    """The key starts `offset` characters before the cut (and ends after it)."""
    command = "ls; " + "x" * (TOOL_INPUT_CHARS + offset - 25) + f" export GITHUB_TOKEN={GITHUB} && ./deploy"
    result = "y" * (TOOL_RESULT_CHARS + offset - 14) + f"\nredis-cli -a {PASSWORD} ping\nPONG"
    called, answered = stubs(command, result)
    assert [p for p in parts(GITHUB) if p in called] == [] and [p for p in parts(PASSWORD) if p in answered] == []
    assert called.startswith("called Bash: ls; xxx") and answered.startswith("result: yyy")
    assert len(called) <= len("called Bash: ") + TOOL_INPUT_CHARS + 1
    assert len(answered) <= len("result: ") + TOOL_RESULT_CHARS + 1


def test_a_stub_is_redacted_and_keeps_the_text_around_the_secret() -> None:
    called, answered = stubs(f"git push https://ci:{GITHUB}@github.com/acme/app.git", f"token {GITHUB} accepted")
    assert called == "called Bash: git push https://ci:[REDACTED:github_token]@github.com/acme/app.git"
    assert answered == "result: token [REDACTED:github_token] accepted"
