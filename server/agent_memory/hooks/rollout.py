"""Codex CLI's session transcript (its "rollout": JSONL at the hook input's `transcript_path`,
`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`) read as turns.

Each line is `{"timestamp", "type", "payload"}`. Only `response_item` lines (what the model was sent
and answered) are read: a `message` of role `user` (the user's text; the environment, instructions
and other scaffolding Codex writes as user text are skipped) or `assistant`; a tool call
(`function_call`, `custom_tool_call` such as apply_patch, `local_shell_call`, `web_search_call`) and
its output, each a one-line stub as for Claude Code. `developer` messages are skipped: the hooks'
own added context arrives as one, and must never be logged back. Everything else (`session_meta`,
`turn_context`, `event_msg`, `world_state`, `compacted`, unknown types: the format grows, as seen
between Codex releases) is skipped, and so is a line that is not JSON. Standard library only.
"""

from __future__ import annotations

import json
import re

from agent_memory.hooks.transcript import TOOL_RESULT_CHARS, Turn, error_text, short, text_of, tool_input

# User text Codex writes itself: the environment, AGENTS.md and other instructions, shell echoes.
_SCAFFOLD_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                      "<permissions instructions>", "<skills_instructions>", "<user_shell_command>",
                      "<turn_aborted>", "<subagent_notification>", "<collaboration_mode>")
_WRAPPED = re.compile(r"^<([a-z][a-z_ -]{0,40})>.*</\1>$", re.DOTALL)  # a whole message in one tag
_OUTPUT_HEADER = re.compile(r"^(?:Chunk ID: \S+\n)?(?:Wall time: [^\n]*\n)?(?:Process exited with code (-?\d+)\n)?"
                            r"(?:Original token count: \d+\n)?Output:\n?")
_SHELLS = ("bash", "sh", "zsh")


def parse_rollout(lines: list[bytes] | list[str]) -> list[Turn]:
    """The turns of these rollout lines (bytes or text, each one JSON object)."""
    turns: list[Turn] = []
    tool_names: dict[str, str] = {}  # call_id -> tool name, to name the outputs
    for line in lines:
        item, at = _item(line)
        if item is None:
            continue
        kind = item.get("type")
        if kind == "message":
            turns += _message(item, at)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            name, what = _call(item)
            if isinstance(item.get("call_id"), str):
                tool_names[item["call_id"]] = name
            turns.append(Turn("tool", f"called {name}: {what}", at, name))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = item.get("call_id")
            name = tool_names.get(call_id) if isinstance(call_id, str) else None
            turns.append(Turn("tool", _output(item.get("output")), at, name))
    return turns


def _item(line: bytes | str) -> tuple[dict | None, str | None]:
    """A `response_item` line's payload and timestamp, or None for any other line."""
    if not line.strip():
        return None, None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or not UTF-8
        return None, None
    if not isinstance(record, dict) or record.get("type") != "response_item":
        return None, None
    payload = record.get("payload")
    at = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
    return (payload, at) if isinstance(payload, dict) else (None, None)


def _message(item: dict, at: str | None) -> list[Turn]:
    role = item.get("role")
    if role not in ("user", "assistant"):  # developer and system: instructions and the hooks' context
        return []
    wanted = "input_text" if role == "user" else "output_text"
    content = item.get("content")
    texts = [text_of(block.get("text")) for block in content if isinstance(block, dict)
             and block.get("type") == wanted] if isinstance(content, list) else []
    texts = [t for t in texts if t and not (role == "user" and _is_scaffold(t))]
    return [Turn(role, "\n\n".join(texts), at, None)] if texts else []


def _is_scaffold(text: str) -> bool:
    return text.startswith(_SCAFFOLD_PREFIXES) or _WRAPPED.match(text) is not None


def _call(item: dict) -> tuple[str, str]:
    """(tool name, what it was asked) of a tool call item."""
    kind = item["type"]
    if kind == "local_shell_call":
        action = item.get("action") if isinstance(item.get("action"), dict) else {}
        return "shell", tool_input({"command": _command(action.get("command"))})
    if kind == "web_search_call":
        action = item.get("action") if isinstance(item.get("action"), dict) else {}
        return "web_search", tool_input(action)
    name = item.get("name") if isinstance(item.get("name"), str) and item.get("name") else "tool"
    if isinstance(item.get("namespace"), str) and item["namespace"]:  # an MCP server's tool: mcp__<server>
        name = f"{item['namespace']}__{name}"
    if kind == "custom_tool_call":  # free-form input, e.g. an apply_patch envelope
        raw = item.get("input")
        return name, short(raw, 80) if isinstance(raw, str) else "?"
    raw = item.get("arguments")  # JSON in a string
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except (ValueError, RecursionError):
        arguments = raw
    if isinstance(arguments, dict) and isinstance(arguments.get("command"), list):
        arguments = {**arguments, "command": _command(arguments["command"])}
    return name, tool_input(arguments)


def _command(argv: object) -> str:
    """A shell call's argv as the command it runs: `["bash", "-lc", "x"]` is `x`."""
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return str(argv) if argv is not None else ""
    if len(argv) == 3 and argv[0].rsplit("/", 1)[-1] in _SHELLS and argv[1] in ("-lc", "-c"):
        return argv[2]
    return " ".join(argv)


def _output(output: object) -> str:
    """A tool output's stub: its text without the header Codex puts before a command's output."""
    if isinstance(output, list):  # content items, e.g. an MCP tool's
        output = "\n".join(part["text"] for part in output if isinstance(part, dict)
                           and part.get("type") in ("input_text", "output_text", "text")
                           and isinstance(part.get("text"), str))
    elif isinstance(output, dict):  # an older shape: {"content": ..., "success": false}
        failed = output.get("success") is False
        body = output.get("content")
        text = short(error_text(body) if failed else body, TOOL_RESULT_CHARS) if isinstance(body, str) else ""
        return f"result: {'error ' if failed else ''}{text}".strip() if text else "result: (empty)"
    if not isinstance(output, str):
        return "result: (empty)"
    header = _OUTPUT_HEADER.match(output)
    failed = bool(header and header.group(1) not in (None, "0"))
    body = output[header.end():] if header else output
    text = short(error_text(body) if failed else body, TOOL_RESULT_CHARS)
    prefix = "result: error" if failed else "result:"
    return f"{prefix} {text}" if text else f"{prefix} (empty)"
