"""An MCP server entry in a TOML file (Codex's `config.toml`, `[mcp_servers.<name>]`), put in by
editing the text: the server's own table (and its subtables) is replaced where it stood, else added
at the end, and every other line (settings, comments, layout) stays as it was. The result is
parsed again and must be the old file with only that server changed; anything else (the server
written inline, as dotted keys, a file that is not TOML) is refused and nothing is written."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path

from agent_memory.cli.host_files import SetupError, read_file

_BARE = re.compile(r"^[A-Za-z0-9_-]+\Z")
_HEADER = re.compile(r"^\s*\[(\[?)\s*(.*?)\s*\]\]?\s*(?:#.*)?$")  # [table] or [[array of tables]]
_KEY_PART = re.compile(r'\s*(?:([A-Za-z0-9_-]+)|"((?:[^"\\]|\\.)*)"|\'([^\']*)\')\s*(?:\.|$)')


def load_text(path: Path) -> tuple[Path, str, dict]:
    """The file's text and its parsed data (empty when missing), at its real path (through links).
    Raises SetupError for a file that cannot be read or is not TOML, touching nothing."""
    path, text = read_file(path)
    try:
        return path, text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SetupError(f"{path} is not valid TOML ({exc})") from None


def key(*parts: str) -> str:
    """A dotted TOML key, each part bare when it can be."""
    return ".".join(p if _BARE.match(p) else _string(p) for p in parts)


def _string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; DEL must be escaped too)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key(str(k))} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {type(value).__name__}")


def table(prefix: tuple[str, ...], entry: dict) -> str:
    """`entry` as the TOML table `[prefix]` (lists and small tables inline)."""
    lines = [f"[{key(*prefix)}]"] + [f"{key(str(k))} = {_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def _parts(header: str) -> tuple[str, ...] | None:
    """The parts of a table header's dotted key, None when it is not one this module reads."""
    parts, at = [], 0
    while at < len(header):
        found = _KEY_PART.match(header, at)
        if found is None or found.end() == at:
            return None
        bare, basic, literal = found.groups()
        parts.append(bare if bare is not None else literal if literal is not None else json.loads(f'"{basic}"'))
        at = found.end()
    return tuple(parts) if parts else None


def put_server(path: Path, text: str, data: dict, servers_key: str, name: str, entry: dict) -> tuple[str, bool]:
    """(the new text, a server of that name was there): `[servers_key.name]` set to `entry`.

    Raises:
        SetupError: the file's servers cannot be merged this way (nothing is changed)."""
    servers = data.get(servers_key, {})
    if not isinstance(servers, dict):
        raise SetupError(f'"{servers_key}" in {path} is not a table')
    ours = (servers_key, name)
    kept: list[str] = []
    dropped: list[str] = []  # the lines of our old table, while in it
    place: int | None = None  # where it stood
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line)
        if header:
            parts = _parts(header.group(2))
            if parts is not None and parts[:2] == ours:  # our table or one of its subtables
                place = len(kept) if place is None else place
                dropped.append(line)
                continue
            tail: list[str] = []
            while dropped and (dropped[-1].lstrip().startswith("#") or not dropped[-1].strip()):
                tail.insert(0, dropped.pop())
            kept += [t for t in tail if t.strip()]  # the comments just above the next table are its own
            dropped = []
        if dropped:
            dropped.append(line)
        else:
            kept.append(line)
    block = table(ours, entry)
    if place is None:
        body = "".join(kept)
        new_text = body + ("" if not body or body.endswith("\n") else "\n") + ("\n" if body.strip() else "") + block
    else:
        after = "".join(kept[place:])
        new_text = "".join(kept[:place]) + block + ("\n" if after.strip() else "") + after
    expected = copy.deepcopy(data)
    expected.setdefault(servers_key, {})[name] = entry
    try:
        merged = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        merged = None
    if merged != expected:
        raise SetupError(f"cannot merge server '{name}' into {path} safely (written inline or as dotted keys?)")
    return new_text, name in servers
