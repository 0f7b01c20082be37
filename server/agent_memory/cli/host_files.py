"""What `agent-memory setup` shares between hosts with and without hooks: the hosts' files, merged
into as JSON objects (the old file copied aside first, links followed), and the exit codes."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


@dataclass(frozen=True)
class Host:
    title: str
    servers_key: str  # the file's object of servers by name
    default_agent_id: str
    stdio_type: bool  # the entry names its transport ("type": "stdio")

    def config_file(self, name: str) -> Path:
        """The host's configuration file on this machine (VS Code: the workspace in the current directory)."""
        home = Path.home()
        if name == "cursor":
            return home / ".cursor" / "mcp.json"
        if name == "vscode":
            return Path.cwd() / ".vscode" / "mcp.json"
        if sys.platform == "darwin":
            return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        if sys.platform == "win32":
            return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude" / \
                "claude_desktop_config.json"
        return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude" / "claude_desktop_config.json"


class SetupError(Exception):
    """The host's file cannot be merged into; the message says why."""


def merge_into(path: Path, servers_key: str, name: str, entry: dict) -> tuple[bool, Path | None]:
    """Put `entry` under `servers_key`/`name` in the JSON file `path`, keeping everything else; the
    old file is copied aside first. Returns (an entry of that name was replaced, the backup).
    A linked file (dotfiles) is merged where the link points, and the link stays a link."""
    path, data = load_object(path)
    replaced = put_server(path, data, servers_key, name, entry)
    return replaced, write_object(path, data)


def read_file(path: Path) -> tuple[Path, str]:
    """The file's real path (through links) and its text (empty when missing). Raises SetupError
    for a file that cannot be read, touching nothing."""
    path = Path(os.path.realpath(path))
    try:
        return path, path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def load_object(path: Path) -> tuple[Path, dict]:
    """The JSON object in `path` (an empty one when the file is missing or blank), and the path it
    is really at (through links). Raises SetupError for anything else, touching nothing."""
    path, text = read_file(path)
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise SetupError(f"{path} is not plain JSON ({exc}; comments are not supported)") from None
    except RecursionError:
        raise SetupError(f"{path} is not plain JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise SetupError(f"{path} does not hold a JSON object")
    return path, data


def put_server(path: Path, data: dict, servers_key: str, name: str, entry: dict) -> bool:
    """Set the server `name` in the loaded file `data`; True when one of that name was there."""
    servers = data.setdefault(servers_key, {})
    if not isinstance(servers, dict):
        raise SetupError(f'"{servers_key}" in {path} is not a JSON object')
    replaced = name in servers
    servers[name] = entry
    return replaced


def write_object(path: Path, data: dict) -> Path | None:
    """Write `data` to `path` (a real path, from load_object) in one step, the old file copied
    aside first with its mode kept; returns the backup, None when there was no file."""
    return write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write_text(path: Path, text: str) -> Path | None:
    """`write_object` for a text already made (a TOML file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        backup = _backup(path) if path.exists() else None
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.",
                                         delete=False) as out:
            out.write(text)
        try:
            if backup is not None:
                shutil.copymode(backup, out.name)
            os.replace(out.name, path)
        except OSError:
            Path(out.name).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise SetupError(f"cannot write {path}: {exc.strerror or exc}") from None
    return backup


def _backup(path: Path) -> Path:
    backup = path.with_name(path.name + ".bak")
    number = 0
    while backup.exists():
        number += 1
        backup = path.with_name(f"{path.name}.bak.{number}")
    shutil.copy2(path, backup)
    return backup
