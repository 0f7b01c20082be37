"""`agent-memory setup claude-code --plugin DIR`: a Claude Code plugin carrying what `setup
claude-code` merges into a project (the MCP server, with `--hooks-capture true --project auto`, and
the hooks running `agent-memory hook claude-code`, events and timeouts from hooks/hosts.py), in a
local marketplace at DIR, so that one command installs it for every project of the user:

    claude plugin install agent-memory --marketplace DIR

DIR/.claude-plugin/marketplace.json lists the plugin (other plugins listed there are kept); the
plugin is DIR/plugins/NAME with .claude-plugin/plugin.json, hooks/hooks.json and .mcp.json. The
hooks and the server run this installation by absolute path, so the plugin is for this machine.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from agent_memory import __version__
from agent_memory.cli.host_files import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    Host,
    SetupError,
    load_object,
    put_server,
    write_object,
)
from agent_memory.cli.host_hooks import hooked, put_hooks

PLUGIN_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*\Z")  # what `claude plugin validate` accepts
DESCRIPTION = "Scoped, permissioned memory for Claude Code: recall at session start and with each prompt, " \
              "capture of each session, and the agent-memory MCP tools"


def plugin_files(root: Path, name: str) -> dict[str, Path]:
    plugin = root / "plugins" / name
    return {"marketplace": root / ".claude-plugin" / "marketplace.json",
            "manifest": plugin / ".claude-plugin" / "plugin.json",
            "hooks": plugin / "hooks" / "hooks.json", "servers": plugin / ".mcp.json"}


def _listed(name: str) -> Callable[[Path, dict], bool]:
    """The marketplace lists the plugin (in place of an entry of that name); True when it did."""
    def step(path: Path, data: dict) -> bool:
        data.setdefault("name", f"{name}-local")
        data.setdefault("owner", {"name": "agent-memory"})
        data.setdefault("description", "agent-memory, installed from this machine")
        plugins = data.setdefault("plugins", [])
        if not isinstance(plugins, list):
            raise SetupError(f'"plugins" in {path} is not a JSON list')
        entry = {"name": name, "source": f"./plugins/{name}", "description": DESCRIPTION, "version": __version__}
        at = next((i for i, p in enumerate(plugins) if isinstance(p, dict) and p.get("name") == name), None)
        if at is None:
            plugins.append(entry)
        else:
            plugins[at] = {**plugins[at], **entry}
        return at is not None
    return step


def _manifest(name: str) -> Callable[[Path, dict], bool]:
    def step(path: Path, data: dict) -> bool:
        had = data.get("name") == name
        data.update(name=name, version=__version__, description=DESCRIPTION)
        data.setdefault("author", {"name": "agent-memory"})
        return had
    return step


def run(options: argparse.Namespace, host: Host, entry: dict, command: list[str]) -> int:
    name = options.setup_name
    if not PLUGIN_NAME.match(name):
        print("agent-memory: setup: with --plugin, --name is the plugin's name: lowercase letters, digits and "
              "single hyphens, starting with a letter", file=sys.stderr)
        return EXIT_USAGE
    root = Path(options.setup_plugin).expanduser().absolute()
    entry, groups = hooked(options, entry, command)
    files = plugin_files(root, name)
    steps: list[tuple[Path, str, Callable[[Path, dict], bool]]] = [
        (files["marketplace"], f"plugin '{name}' listed", _listed(name)),
        (files["manifest"], "manifest", _manifest(name)),
        (files["hooks"], f"hooks on {', '.join(groups)}", lambda path, data: put_hooks(path, data, groups, name)),
        (files["servers"], f"server '{name}'", lambda path, data: put_server(path, data, host.servers_key, name,
                                                                            entry)),
    ]
    if not options.write:
        printed = {}
        for path, _, step in steps:
            data: dict = {}
            step(path, data)
            printed[str(path)] = data
        print(json.dumps(printed, indent=2))
        print(f"setup: write these files (or run again with --write), then: {install_command(root, name)}",
              file=sys.stderr)
        return EXIT_OK
    try:
        loaded = [(*load_object(path), what, step) for path, what, step in steps]  # all parsed before any write
        merged = []
        for path, data, what, step in loaded:
            before = copy.deepcopy(data)
            done = "replaced" if step(path, data) else "added"
            merged.append((path, data, data != before, f"{done} {what}"))
    except SetupError as exc:
        print(f"agent-memory: setup: {exc}; nothing written", file=sys.stderr)
        return EXIT_FAILED
    for path, data, changed, done in merged:
        if not changed:
            print(f"setup: {path} is up to date; left as it is", file=sys.stderr)
            continue
        try:
            backup = write_object(path, data)
        except SetupError as exc:
            print(f"agent-memory: setup: {exc}", file=sys.stderr)
            return EXIT_FAILED
        kept = f"; the previous file is kept as {backup}" if backup else ""
        print(f"setup: {done} in {path}{kept}", file=sys.stderr)
    print(f"setup: the plugin is in {root}; install it (every project of this user) with: "
          f"{install_command(root, name)}", file=sys.stderr)
    return EXIT_OK


def install_command(root: Path, name: str) -> str:
    return shlex.join(["claude", "plugin", "install", name, "--marketplace", str(root)])
