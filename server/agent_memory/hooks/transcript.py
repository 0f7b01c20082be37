"""Claude Code's session transcript (JSONL at the hook input's `transcript_path`) read as turns, and
the reading both hosts' JSONL transcripts share (`read_new`; Codex's rollout lines: rollout.py).

Pure standard library (and the core's redactor, standard library too), so a hook process that
imports it stays fast. Only what a memory needs is kept: the user's text, the assistant's text, and
a one-line stub per tool call and tool result (never a whole result). A stub is redacted before it
is cut, since a cut through a key leaves a part no detector knows; the server redacts what it
stores again, and the stub is redacted here whatever the server's setting. Everything else (hook
attachments, system lines, API request records, sidechain lines of subagents, command echoes,
unknown types: the format grows) is skipped, and a line that is not JSON is skipped too: reading
never raises on content.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from agent_memory.core.memories.secrets import redact

TOOL_INPUT_CHARS = 80
TOOL_RESULT_CHARS = 120
_SKIP_BLOCK = 1 << 16  # bytes read at a time while skipping a line longer than max_bytes
_REDACT_FIRST = 1 << 16  # characters of a tool's input or result redacted before its stub is cut
# Keys of a tool's input that say what it did, in order of preference (Bash, Codex's exec_command, Read/Edit/Write,
# notebooks, Glob/Grep, web search and fetch, Task); otherwise the input as compact JSON.
_INPUT_KEYS = ("command", "cmd", "file_path", "notebook_path", "path", "pattern", "query", "url", "description",
               "prompt")
_ERROR_LINE = re.compile(r"\b(?:error|exception|traceback|failed|failure|fatal|panic|denied|not found|"
                         r"no such file|cannot|could not|refused|timed out)\b", re.IGNORECASE)
# User text the host wrote, not the user: slash-command and shell echoes, reminders, hook output.
_ECHO_PREFIXES = ("<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
                  "<local-command-stderr>", "<local-command-caveat>", "<bash-input>", "<bash-stdout>",
                  "<bash-stderr>", "<system-reminder>", "<user-prompt-submit-hook>",
                  "[Request interrupted by user")


@dataclass(frozen=True)
class Turn:
    role: str  # "user" | "assistant" | "tool"
    content: str
    at: str | None  # the line's ISO timestamp
    name: str | None  # tool name for tool stubs


def read_new(path: str, offset: int, max_bytes: int = 4_000_000,
             parse: Callable[[list[bytes]], list[Turn]] | None = None) -> tuple[list[Turn], int]:
    """Turns in the JSONL transcript from byte `offset` on, read by `parse` (default: Claude Code's
    lines, `parse_lines`); returns the new offset, which never
    passes a partial last line (a line without its trailing newline is left for the next read).
    A file shorter than offset (rewritten/truncated) restarts at 0; a missing file reads as empty.
    At most `max_bytes` are read per call (the rest is for the next call); a single line longer
    than that is skipped."""
    offset = max(0, offset)
    max_bytes = max(1, max_bytes)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < offset:
                offset = 0
            handle.seek(offset)
            chunk = handle.read(max_bytes)
            end = chunk.rfind(b"\n")
            if end < 0:
                if len(chunk) < max_bytes:
                    return [], offset  # nothing new, or only a line still being written
                # One line longer than max_bytes: skip it (to its newline) without holding it.
                at = offset + len(chunk)
                while block := handle.read(_SKIP_BLOCK):
                    found = block.find(b"\n")
                    if found >= 0:
                        return [], at + found + 1
                    at += len(block)
                return [], offset  # not finished yet: skipped once it is
    except FileNotFoundError:
        return [], 0
    except OSError:  # unreadable for now (permissions, a folder): try again from the same place
        return [], offset
    return (parse or parse_lines)(chunk[: end + 1].split(b"\n")), offset + end + 1


def parse_lines(lines: list[bytes] | list[str]) -> list[Turn]:
    """The turns of these transcript lines (bytes or text, each one JSON object); consecutive text
    lines of one assistant message become one turn."""
    turns: list[Turn] = []
    message_of_last: str | None = None  # the assistant message id the last turn holds text of
    tool_names: dict[str, str] = {}  # tool_use id -> tool name, to name the results
    for line in lines:
        record = _record(line)
        if record is None:
            continue
        kind = record.get("type")
        at = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if kind == "user":
            if record.get("isMeta") is True or record.get("isCompactSummary") is True:
                continue
            message_of_last = None
            turns.extend(_user_turns(content, at, tool_names))
        elif kind == "assistant":
            if record.get("isApiErrorMessage") is True or message.get("model") == "<synthetic>":
                continue
            message_id = message.get("id") if isinstance(message.get("id"), str) else None
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks if isinstance(blocks, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    text = text_of(block.get("text"))
                    if not text:
                        continue
                    last = turns[-1] if turns else None
                    if last is not None and message_id is not None and message_of_last == message_id:
                        turns[-1] = Turn("assistant", f"{last.content}\n\n{text}", last.at, None)
                    else:
                        turns.append(Turn("assistant", text, at, None))
                    message_of_last = message_id
                elif block.get("type") == "tool_use":
                    name = block.get("name") if isinstance(block.get("name"), str) else "tool"
                    if isinstance(block.get("id"), str):
                        tool_names[block["id"]] = name
                    turns.append(Turn("tool", f"called {name}: {tool_input(block.get('input'))}", at, name))
                    message_of_last = None
    return turns


def _record(line: bytes | str) -> dict | None:
    """The line's JSON object when it is one of ours to read: not blank, JSON, an object, not a
    subagent's (sidechain) line."""
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or not UTF-8 (UnicodeDecodeError is a ValueError)
        return None
    if not isinstance(record, dict) or record.get("isSidechain") is True:
        return None
    return record if record.get("type") in ("user", "assistant") else None


def _user_turns(content: object, at: str | None, tool_names: dict[str, str]) -> list[Turn]:
    if isinstance(content, str):
        text = text_of(content)
        return [Turn("user", text, at, None)] if text and not _is_echo(text) else []
    turns: list[Turn] = []
    texts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            text = text_of(block.get("text"))
            if text and not _is_echo(text):
                texts.append(text)
        elif block.get("type") == "tool_result":
            if texts:
                turns.append(Turn("user", "\n\n".join(texts), at, None))
                texts = []
            tool_id = block.get("tool_use_id")
            name = tool_names.get(tool_id) if isinstance(tool_id, str) else None
            turns.append(Turn("tool", _tool_result(block), at, name))
    if texts:
        turns.append(Turn("user", "\n\n".join(texts), at, None))
    return turns


def text_of(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _is_echo(text: str) -> bool:
    return text.startswith(_ECHO_PREFIXES)


def short(text: str, limit: int) -> str:
    """`text` on one line, its secrets redacted, cut to `limit` characters (an ellipsis says it
    was cut). Redacted first: a cut through a key would leave a part no detector knows."""
    flat = " ".join(redact(text[:_REDACT_FIRST])[0].split())
    if len(flat) <= limit < len(text) and len(text) > _REDACT_FIRST:  # mostly blank: the whole text
        flat = " ".join(redact(text)[0].split())
    return flat if len(flat) <= limit else flat[:limit] + "\u2026"


def tool_input(value: object) -> str:
    if isinstance(value, dict):
        for key in _INPUT_KEYS:
            if isinstance(value.get(key), str) and value[key].strip():
                return short(value[key], TOOL_INPUT_CHARS)
    try:
        compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (ValueError, RecursionError):
        compact = "?"
    return short(compact, TOOL_INPUT_CHARS)


def _tool_result(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, list):
        parts = [part.get("text") if part.get("type") == "text" else f"[{part.get('type')}]"
                 for part in content if isinstance(part, dict)]
        content = " ".join(p for p in parts if isinstance(p, str))
    failed = block.get("is_error") is True
    text = short(error_text(content) if failed else content, TOOL_RESULT_CHARS) if isinstance(content, str) else ""
    prefix = "result: error" if failed else "result:"
    return f"{prefix} {text}" if text else f"{prefix} (empty)"


def error_text(text: str) -> str:
    """A failed tool's output from the line that says what went wrong (the first line naming an
    error, an exception, a failure), else the whole output: a developer searches for the error."""
    at = _ERROR_LINE.search(text)
    return text[text.rfind("\n", 0, at.start()) + 1:] if at else text
