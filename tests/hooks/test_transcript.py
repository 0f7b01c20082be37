"""Claude Code's transcript read as turns (agent_memory.hooks.transcript): the lines HOSTS.md lists,
recorded in tests/fixtures/claude_transcript.jsonl, read whole, in pieces, after a rewrite."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from agent_memory.hooks.transcript import Turn, parse_lines, read_new

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_transcript.jsonl"
DATA = FIXTURE.read_bytes()
COMPLETE = DATA.rfind(b"\n") + 1  # the fixture ends in a partial line the host is still writing

EXPECTED = [
    ("user", "Why does the deploy script fail on staging?", None),
    ("assistant", "Let me look at the deploy script first.", None),
    ("tool", "called Bash: cat scripts/deploy.sh && git log --oneline -5 -- scripts/deploy.sh", "Bash"),
    ("tool", "result: #!/bin/sh set -eu aws s3 sync dist/ \"s3://$BUCKET\" --delete " + "x" * 60 + "\u2026", "Bash"),
    ("assistant", "The script syncs to `$BUCKET`, which staging never sets.\n\n"
                  "I will check the staging environment file.", None),
    ("tool", "called Read: /home/dev/shop/config/staging.env", "Read"),
    ("tool", "result: error <tool_use_error>File does not exist.</tool_use_error>", "Read"),
    ("tool", 'called mcp__agent-memory__memory_retrieve: {"limit":5,"namespace":"shop","tags":["deploy","staging"]}',
     "mcp__agent-memory__memory_retrieve"),
    ("tool", "result: (empty)", "mcp__agent-memory__memory_retrieve"),
    ("assistant", "Staging has no `config/staging.env`, so `BUCKET` is empty and `aws s3 sync` fails. Add the file "
                  "with `BUCKET=shop-staging-eu`.", None),
    ("user", "Thanks. Also, here is the error screen:", None),
    ("assistant", "Want me to add the file?", None),
]


def _joined(turns: list[Turn]) -> str:
    """Turn contents in order; a merged assistant message reads the same as its parts."""
    return "\n\n".join(t.content for t in turns)


def test_the_recorded_session_reads_as_user_assistant_and_tool_stub_turns(tmp_path: Path) -> None:
    turns, offset = read_new(str(FIXTURE), 0)
    assert [(t.role, t.content, t.name) for t in turns] == EXPECTED
    assert offset == COMPLETE and DATA[COMPLETE:] and b"\n" not in DATA[COMPLETE:]
    # Each turn carries its first line's timestamp.
    assert turns[0].at == "2026-11-03T10:00:02.074Z" and turns[4].at == "2026-11-03T10:00:07.259Z"
    # Nothing new until the host finishes the line.
    assert read_new(str(FIXTURE), offset) == ([], offset)


def test_the_partial_line_is_read_once_finished(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copy(FIXTURE, path)
    _, offset = read_new(str(path), 0)
    rest = (b'external", "type": "user", "message": {"role": "user", "content": "Yes, add it"}, '
            b'"timestamp": "2026-11-03T10:00:40.000Z"}\n')
    with path.open("ab") as out:
        out.write(rest)
    turns, end = read_new(str(path), offset)
    assert [(t.role, t.content) for t in turns] == [("user", "Yes, add it")] and end == path.stat().st_size


@pytest.mark.parametrize("line", [
    {"type": "attachment", "attachment": {"type": "hook_success", "content": "memories", "hookEvent": "SessionStart"}},
    {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": ["x"]}},
    {"type": "system", "subtype": "stop_hook_summary", "message": {"role": "system", "content": "Stop hook ran"}},
    {"type": "queue-operation", "operation": "enqueue", "content": "a queued prompt"},
    {"type": "api-request-shape", "messages": 3}, {"type": "api-request-blob", "bytes": 10},
    {"type": "api-request", "requestId": "r"}, {"type": "last-prompt", "lastPrompt": "the last prompt"},
    {"type": "cost-state", "totalCostUsd": 0.1}, {"type": "summary", "summary": "a summary"},
    {"type": "a-type-from-next-year", "message": {"role": "user", "content": "new"}},
    {"type": "user", "isSidechain": True, "message": {"role": "user", "content": "a subagent's task"}},
    {"type": "assistant", "isSidechain": True, "message": {"id": "m", "content": [{"type": "text", "text": "sub"}]}},
    {"type": "user", "isMeta": True, "message": {"role": "user", "content": "Caveat: local commands below"}},
    {"type": "user", "message": {"role": "user", "content": "<command-name>/clear</command-name>"}},
    {"type": "user", "message": {"role": "user", "content": "<local-command-stdout>ok</local-command-stdout>"}},
    {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x"}]}},
    {"type": "user", "message": {"role": "user", "content": [{"type": "text",
                                                              "text": "[Request interrupted by user]"}]}},
    {"type": "user", "isCompactSummary": True, "message": {"role": "user", "content": "This session is continued"}},
    {"type": "assistant", "isApiErrorMessage": True, "message": {"id": "m", "model": "<synthetic>",
                                                                  "content": [{"type": "text", "text": "API Error"}]}},
    {"type": "assistant", "message": {"id": "m", "content": [{"type": "thinking", "thinking": "hmm"}]}},
    {"type": "user", "message": "not an object"}, {"type": "user"}, [1, 2], "a string", 7, None,
])
def test_lines_that_are_not_conversation_are_skipped(line: object) -> None:
    assert parse_lines([json.dumps(line)]) == []


@pytest.mark.parametrize("line", [b"not json", b'{"type": "user", "message": {', b"\xff\xfe{}", b"[" * 100_000,
                                  b"   ", b""])
def test_a_line_that_is_not_json_is_skipped(line: bytes) -> None:
    good = json.dumps({"type": "user", "message": {"role": "user", "content": "still here"}}).encode()
    assert [t.content for t in parse_lines([line, good])] == ["still here"]


def test_tool_stubs_are_short_and_never_the_whole_input_or_result() -> None:
    long = "y" * 5000
    turns = parse_lines([
        json.dumps({"type": "assistant", "message": {"id": "m1", "content": [
            {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/a/" + long, "content": long}},
            {"type": "tool_use", "id": "t2", "name": "Custom", "input": {"items": [long]}},
            {"type": "tool_use", "id": "t3", "name": "Grep", "input": {"pattern": "def main\n  x", "path": "src"}}]}}),
        json.dumps({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": long},
            {"type": "tool_result", "tool_use_id": "t2", "is_error": True, "content": "boom " + long},
            {"type": "tool_result", "tool_use_id": "unknown", "content": [{"type": "image", "source": {}}]},
            {"type": "text", "text": "and a question"}]}}),
    ])
    assert [(t.role, t.name) for t in turns] == [("tool", "Write"), ("tool", "Custom"), ("tool", "Grep"),
                                                 ("tool", "Write"), ("tool", "Custom"), ("tool", None),
                                                 ("user", None)]
    assert turns[0].content == "called Write: /a/" + "y" * 77 + "\u2026"
    assert turns[1].content.startswith('called Custom: {"items":["yyy') and len(turns[1].content) <= 16 + 81
    assert turns[2].content == "called Grep: src"  # path before pattern: the more telling of the two
    assert turns[3].content == "result: " + "y" * 120 + "\u2026"
    assert turns[4].content.startswith("result: error boom yyy") and len(turns[4].content) <= 14 + 121
    assert turns[5].content == "result: [image]" and turns[6].content == "and a question"


def test_text_of_one_assistant_message_merges_only_while_nothing_comes_between() -> None:
    def text(message_id: str, words: str) -> str:
        return json.dumps({"type": "assistant", "message": {"id": message_id, "content": [{"type": "text",
                                                                                            "text": words}]}})
    use = json.dumps({"type": "assistant", "message": {"id": "a", "content": [
        {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}]}})
    turns = parse_lines([text("a", "one"), text("a", "two"), use, text("a", "three"), text("b", "four"),
                         text("b", "five")])
    assert [t.content for t in turns] == ["one\n\ntwo", "called Bash: ls", "three", "four\n\nfive"]


def test_reading_in_pieces_as_the_file_grows_gives_the_same_turns(tmp_path: Path) -> None:
    whole, _ = read_new(str(FIXTURE), 0)
    path = tmp_path / "session.jsonl"
    for seed in range(5):
        cuts = sorted(random.Random(seed).sample(range(1, len(DATA)), 12)) + [len(DATA)]
        path.write_bytes(b"")
        turns: list[Turn] = []
        offset = 0
        for cut in cuts:
            path.write_bytes(DATA[:cut])
            new, offset = read_new(str(path), offset)
            assert offset <= cut and (offset == 0 or DATA[offset - 1:offset] == b"\n")
            turns += new
        assert offset == COMPLETE
        assert _joined(turns) == _joined(whole)


def test_max_bytes_bounds_each_read_and_an_overlong_line_is_skipped(tmp_path: Path) -> None:
    whole, _ = read_new(str(FIXTURE), 0)
    turns: list[Turn] = []
    offset = 0
    for _ in range(1000):
        new, after = read_new(str(FIXTURE), offset, max_bytes=900)
        assert after - offset <= 900 or not new  # only a skipped line may move further
        turns += new
        if after == offset:
            break
        offset = after
    assert offset == COMPLETE
    # Lines over 900 bytes (the long tool result) are skipped; everything else is read.
    long_lines = [line for line in DATA[:COMPLETE].split(b"\n") if len(line) + 1 > 900]
    assert long_lines and _joined(turns) == _joined([t for t in whole if not t.content.startswith("result: #!")])
    # An overlong line still being written is left where it starts.
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"type": "user"}\n' + b"z" * 5000)
    assert read_new(str(path), 0, max_bytes=100) == ([], 17)
    assert read_new(str(path), 17, max_bytes=100) == ([], 17)


def test_a_file_shorter_than_the_offset_restarts_at_zero(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copy(FIXTURE, path)
    _, offset = read_new(str(path), 0)
    fresh = json.dumps({"type": "user", "message": {"role": "user", "content": "a new session"}}) + "\n"
    path.write_text(fresh)  # rewritten (cleared, compacted) and shorter than what was read
    turns, end = read_new(str(path), offset)
    assert [t.content for t in turns] == ["a new session"] and end == len(fresh)
    path.unlink()
    assert read_new(str(path), end) == ([], 0)  # a missing file reads as empty
    assert read_new(str(tmp_path), 5) == ([], 5)  # unreadable (a folder): try again later from there
