"""Codex's rollout read as turns (agent_memory.hooks.rollout). The fixture was recorded with the real
codex-cli 0.171.0 (`codex exec`, then `codex exec resume --last`) against a stand-in model that
called a shell command and an MCP tool, with hooks adding context; long instruction texts are
shortened. Added by hand in the shapes of codex-rs/protocol: an apply_patch call and its output,
a compaction line, a line that is not JSON, and a last line still being written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_memory.hooks.rollout import parse_rollout
from agent_memory.hooks.transcript import Turn, read_new

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "codex_rollout.jsonl"
DATA = FIXTURE.read_bytes()
COMPLETE = DATA.rfind(b"\n") + 1

EXPECTED = [
    ("user", "Why does the deploy script fail on staging?", None),
    ("tool", "called exec_command: cat scripts/deploy.sh", "exec_command"),
    ("tool", 'result: #!/bin/sh set -eu aws s3 sync dist/ "s3://$BUCKET" --delete', "exec_command"),
    ("tool", "called mcp__fast__fast_tool: staging bucket", "mcp__fast__fast_tool"),
    ("tool", "result: MCP tool call requires approval, but approval policy is never", "mcp__fast__fast_tool"),
    ("assistant", "Noted.", None),
    ("user", "Thanks. Please add the staging env file.", None),
    ("assistant", "Noted.", None),
    ("tool", "called apply_patch: *** Begin Patch *** Add File: config/staging.env +BUCKET=shop-staging-eu "
             "*** End\u2026", "apply_patch"),
    ("tool", "result: Success. Updated the following files: A config/staging.env", "apply_patch"),
    ("assistant", "Added `config/staging.env` with `BUCKET=shop-staging-eu`.", None),
]


def _read(path: Path, offset: int = 0, max_bytes: int = 4_000_000) -> tuple[list[Turn], int]:
    return read_new(str(path), offset, max_bytes, parse=parse_rollout)


def test_the_recorded_rollout_reads_as_the_conversation_and_nothing_else() -> None:
    turns, offset = _read(FIXTURE)
    assert [(t.role, t.content, t.name) for t in turns] == EXPECTED
    assert offset == COMPLETE  # the line still being written is left for the next read
    said = "\n".join(t.content for t in turns)
    # What the hooks added (developer messages) is never logged back, nor Codex's own scaffolding.
    assert "CTX-START-MARKER" not in said and "CTX-PROMPT-MARKER" not in said
    assert "environment_context" not in said and "skills_instructions" not in said
    assert turns[0].at == "2026-11-28T11:48:52.509Z"


def test_read_in_pieces_it_is_the_same_and_each_turn_once(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    turns: list[Turn] = []
    offset = 0
    for end in range(0, len(DATA) + 1, 997):  # the file grows as Codex writes it
        path.write_bytes(DATA[:end])
        new, offset = _read(path, offset)
        turns += new
    path.write_bytes(DATA)
    new, offset = _read(path, offset)
    turns += new
    # (A result whose call came in an earlier read is not named: the reads keep no state.)
    assert [(t.role, t.content) for t in turns] == [e[:2] for e in EXPECTED] and offset == COMPLETE
    small: list[Turn] = []
    offset = 0
    while True:  # a small budget per read, as the hook would with a huge rollout
        new, after = _read(path, offset, max_bytes=3000)
        small += new
        if after == offset:
            break
        offset = after
    assert [t.content for t in small] == [e[1] for e in EXPECTED]


def _line(payload: object, kind: str = "response_item") -> str:
    return json.dumps({"timestamp": "2026-11-28T12:00:00.000Z", "type": kind, "payload": payload})


def test_other_call_shapes_and_outputs() -> None:
    lines = [
        _line({"type": "local_shell_call", "call_id": "c1", "status": "completed",
               "action": {"type": "exec", "command": ["bash", "-lc", "pytest -q tests/"]}}),
        _line({"type": "function_call_output", "call_id": "c1",
               "output": "Process exited with code 2\nOutput:\nE   assert 1 == 2"}),
        _line({"type": "web_search_call", "status": "completed",
               "action": {"type": "search", "query": "zstd rollout"}}),
        _line({"type": "function_call", "name": "shell", "call_id": "c2",
               "arguments": json.dumps({"command": ["/bin/zsh", "-c", "ls docs"]})}),
        _line({"type": "function_call_output", "call_id": "c2", "output": {"content": "denied", "success": False}}),
        _line({"type": "function_call", "name": "exec_command", "call_id": "c3", "arguments": "{not json"}),
        _line({"type": "function_call_output", "call_id": "unknown", "output": ""}),
        _line({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<user_instructions>\nBe brief.\n</user_instructions>"},
            {"type": "input_text", "text": "Run the tests."}, {"type": "input_image", "image_url": "data:"}]}),
        _line({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<new_tag>x</new_tag>"}]}),
        _line({"type": "message", "role": "system", "content": [{"type": "input_text", "text": "system text"}]}),
        _line({"type": "compaction", "encrypted_content": "..."}),
        _line({"type": "user_message", "message": "a display copy, never read"}, kind="event_msg"),
    ]
    turns = parse_rollout(lines)
    assert [(t.role, t.content, t.name) for t in turns] == [
        ("tool", "called shell: pytest -q tests/", "shell"),
        ("tool", "result: error E assert 1 == 2", "shell"),
        ("tool", "called web_search: zstd rollout", "web_search"),
        ("tool", "called shell: ls docs", "shell"),
        ("tool", "result: error denied", "shell"),
        ("tool", 'called exec_command: "{not json"', "exec_command"),
        ("tool", "result: (empty)", None),
        ("user", "Run the tests.", None),
    ]


@pytest.mark.parametrize("line", [
    b"", b"   ", b"\xff\xfe not utf-8", b"[1, 2]", b'"text"', b'{"type": "response_item"}',
    b'{"type": "response_item", "payload": []}', b'{"type": "response_item", "payload": {"type": "message"}}',
    b'{"type": "response_item", "payload": {"type": "message", "role": "user", "content": "flat"}}',
    b'{"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [1, null, {}]}}',
    b'{"type": "response_item", "payload": {"type": "function_call", "name": 7, "arguments": 7}}',
    b'{"type": "response_item", "payload": {"type": "local_shell_call", "action": "rm"}}',
    b'{"type": "response_item", "payload": {"type": "function_call_output", "output": [1, {"type": "x"}]}}',
    b"[" * 100_000 + b"]" * 100_000,
])
def test_a_hostile_or_odd_line_never_raises(line: bytes) -> None:
    for turn in parse_rollout([line]):
        assert turn.role == "tool" and turn.content.startswith(("called ", "result:"))
