"""`agent-memory setup claude-code|gemini-cli`: the MCP server and the hooks that run
`agent-memory hook HOST` on the host's session events, printed or merged into the host's files
(`codex`, whose servers are in TOML: host_codex.py).

Hook entries of agent-memory are recognised by their command (`/any/path/agent-memory hook ...` or
`/any/python -m agent_memory hook ...`) or as an `mcp_tool` hook calling this server, and
replaced; every other hook is kept as it is.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from agent_memory.cli import team_server
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
from agent_memory.hooks.hosts import HOSTS

HOOK_HOSTS = HOSTS  # the hosts with hooks, and their events (hooks/hosts.py: the table the hooks read too)


def host_files(host: str, scope: str) -> tuple[Path, Path]:
    """(the file of MCP servers, the file of hooks) for this scope; project = current directory."""
    home, here = Path.home(), Path.cwd()
    if host == "codex":  # its home is $CODEX_HOME, else ~/.codex
        folder = Path(os.environ.get("CODEX_HOME") or home / ".codex") if scope == "user" else here / ".codex"
        return folder / "config.toml", folder / "hooks.json"
    if host == "claude-code":
        if scope == "user":
            return home / ".claude.json", home / ".claude" / "settings.json"
        return here / ".mcp.json", here / ".claude" / "settings.json"
    settings = (home if scope == "user" else here) / ".gemini" / "settings.json"
    return settings, settings


def hook_command(command: list[str], host: str, identity: list[str] | None = None) -> str:
    """The shell command a hook runs: this installation by absolute path, `hook HOST`, and the
    identity flags the MCP server entry gets (so the hooks and the model's tool calls are one agent)."""
    return shlex.join([*command, "hook", host, *(identity or [])])


def hook_groups(host: str, command: str, name: str) -> dict[str, dict]:
    """Our group of hooks for each of the host's events."""
    spec = HOOK_HOSTS[host]
    groups = {}
    for event in spec.events:
        hook: dict = {"name": name} if spec.named else {}
        hook.update({"type": "command", "command": command, "timeout": round(event.host_timeout * spec.timeout_unit)})
        groups[event.name] = {"matcher": "", "hooks": [hook]} if spec.matcher else {"hooks": [hook]}
    return groups


def is_ours(hook: object, server_name: str) -> bool:
    """A hook of agent-memory's: a command running `agent-memory hook ...` (any installation), or
    an mcp_tool hook calling this server."""
    if not isinstance(hook, dict):
        return False
    if hook.get("type") == "mcp_tool":
        return hook.get("server") == server_name
    command = hook.get("command")
    if hook.get("type") != "command" or not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if words[1:3] == ["-m", "agent_memory"]:  # a Python running the package
        words = ["agent-memory", *words[3:]]
    return len(words) > 1 and Path(words[0]).name == "agent-memory" and words[1] == "hook"


def put_hooks(path: Path, data: dict, groups: dict[str, dict], server_name: str) -> bool:
    """Set our group under each event of `data["hooks"]`, where an earlier one of ours was (else
    last); our hooks elsewhere in the event are removed, and groups left empty by that with them.
    True when there were hooks of ours."""
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SetupError(f'"hooks" in {path} is not a JSON object')
    replaced = False
    for event, ours in groups.items():
        existing = hooks.get(event, [])
        if not isinstance(existing, list):
            raise SetupError(f'"hooks.{event}" in {path} is not a JSON list')
        kept: list = []
        place = None
        for group in existing:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list) and any(is_ours(h, server_name) for h in handlers):
                place = len(kept) if place is None else place
                others = [h for h in handlers if not is_ours(h, server_name)]
                if not others:
                    continue
                group = {**group, "hooks": others}
            kept.append(group)
        kept.insert(len(kept) if place is None else place, ours)
        hooks[event] = kept
        replaced = replaced or place is not None
    return replaced


def hooked(options: argparse.Namespace, entry: dict, command: list[str]) -> tuple[dict, dict[str, dict]]:
    """(the server entry for a host with hooks, our group of hooks per event): the hooks run this
    installation with the entry's identity, and both work in the same project."""
    args = entry.get("args", [])
    identity = args[args.index("serve") + 1:] if "serve" in args else []
    # The hooks capture the sessions: the server's instructions then do not ask the model to as well.
    # Both work in the host's project (auto: the one its directory belongs to), so they meet.
    project = ["--project", options.setup_project]
    entry = {**entry, "args": [*args, "--hooks-capture", "true", *project]}
    explicit = project if options.setup_project != "auto" else []
    if getattr(options, "setup_server_url", ""):  # the team's server: the token says who, for hooks and entry
        entry = team_server.server_entry(options.host, options, command)
        identity = team_server.hook_arguments(options)
    return entry, hook_groups(options.host, hook_command(command, options.host, [*identity, *explicit]),
                              options.setup_name)


def hooks_file(options: argparse.Namespace) -> Path:
    """The file of hooks `setup` works on: --file, else the host's for --scope."""
    if options.setup_file:
        return Path(options.setup_file).expanduser()
    return host_files(options.host, options.setup_scope or "project")[1]


def run(options: argparse.Namespace, host: Host, entry: dict, command: list[str]) -> int:
    servers_file, hooks_file = host_files(options.host, options.setup_scope or "project")
    if options.setup_file:
        if servers_file != hooks_file:
            print(f"agent-memory: setup: --file names one file, and {options.host} uses two ({servers_file} and "
                  f"{hooks_file}); choose them with --scope", file=sys.stderr)
            return EXIT_USAGE
        servers_file = hooks_file = Path(options.setup_file).expanduser()
    name = options.setup_name
    if (wrong := team_server.problem(options)) is not None:
        print(f"agent-memory: setup: {wrong}; nothing written", file=sys.stderr)
        return EXIT_USAGE
    entry, groups = hooked(options, entry, command)
    # Per file, what goes in it: (what it is, a step that puts it in and says if one was replaced).
    edits: dict[Path, list[tuple[str, Callable[[Path, dict], bool]]]] = {}
    edits.setdefault(servers_file, []).append(
        (f"server '{name}'", lambda path, data: put_server(path, data, host.servers_key, name, entry)))
    edits.setdefault(hooks_file, []).append(
        (f"hooks on {', '.join(groups)}", lambda path, data: put_hooks(path, data, groups, name)))
    if not options.write:
        fragments: dict[str, dict] = {}
        for target in edits:
            fragment = fragments.setdefault(str(target), {})
            if target == servers_file:
                fragment[host.servers_key] = {name: entry}
            if target == hooks_file:
                fragment["hooks"] = {event: [group] for event, group in groups.items()}
        print(json.dumps(fragments, indent=2))
        print(f"setup: merge each object above into the file it is under (or run again with --write), then restart "
              f"{host.title}", file=sys.stderr)
        return EXIT_OK
    try:
        loaded = [(*load_object(target), steps) for target, steps in edits.items()]  # all parsed before any write
        merged = []
        for path, data, steps in loaded:
            before = copy.deepcopy(data)
            done = [f"{'replaced' if step(path, data) else 'added'} {what}" for what, step in steps]
            merged.append((path, data, done, data != before, " and ".join(what for what, _ in steps)))
    except SetupError as exc:
        print(f"agent-memory: setup: {exc}; nothing written. Without --write this command prints what to add by "
              "hand.", file=sys.stderr)
        return EXIT_FAILED
    written = False
    for path, data, done, changed, what in merged:
        if changed:
            try:
                backup = write_object(path, data)
            except SetupError as exc:
                print(f"agent-memory: setup: {exc}" + ("; the files named above were written" if written else
                                                       "; nothing written"), file=sys.stderr)
                return EXIT_FAILED
            written = True
            kept = f"; the previous file is kept as {backup}" if backup else ""
            print(f"setup: {' and '.join(done)} in {path}{kept}", file=sys.stderr)
        else:
            print(f"setup: {path} already has this {what}; left as it is", file=sys.stderr)
        _warn_if_disabled(options.host, data, path)
    if options.setup_server_url:
        print(team_server.advice(options), file=sys.stderr)
    print(f"setup: restart {host.title} to use it", file=sys.stderr)
    return EXIT_OK


def _warn_if_disabled(host: str, data: dict, path: Path) -> None:
    """Gemini CLI runs no hook while its hooks system is switched off in that file."""
    if host != "gemini-cli":
        return
    config, tools = data.get("hooksConfig"), data.get("tools")
    if (isinstance(config, dict) and config.get("enabled") is False) or \
            (isinstance(tools, dict) and tools.get("enableHooks") is False):
        print(f"setup: note: hooks are switched off in {path} (hooksConfig.enabled or tools.enableHooks is false); "
              "Gemini CLI will not run them until they are switched on", file=sys.stderr)
