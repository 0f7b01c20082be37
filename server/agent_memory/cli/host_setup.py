"""`agent-memory setup HOST`: the MCP host configuration that launches this installation, printed
or merged into the host's own file (hosts with hooks: host_hooks.py; the files: host_files.py)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from pathlib import Path

from agent_memory.cli import hook_check, host_codex, host_hooks, host_plugin
from agent_memory.cli.host_files import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Host, SetupError, merge_into

HOOKED = "claude-code, gemini-cli, codex"  # the hosts with hooks (hooks/hosts.py)
PROJECT_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}\Z")
HOSTS = {
    "claude-desktop": Host("Claude Desktop", "mcpServers", "claude-desktop", stdio_type=False),
    "vscode": Host("VS Code", "servers", "vscode-copilot", stdio_type=True),
    "cursor": Host("Cursor", "mcpServers", "cursor", stdio_type=False),
    # Hosts whose hooks run `agent-memory hook HOST` too; their files are in host_hooks.py.
    "claude-code": Host("Claude Code", "mcpServers", "claude-code", stdio_type=True),
    "gemini-cli": Host("Gemini CLI", "mcpServers", "gemini-cli", stdio_type=False),
    "codex": Host("Codex CLI", "mcp_servers", "codex", stdio_type=False),  # TOML: host_codex.py
}


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    setup = commands.add_parser(
        "setup", help="print (or with --write, add) the config that makes an MCP host launch this server",
        description="Prints the host's MCP configuration for this installation: the absolute path of the installed "
                    "agent-memory command and the launch identity. With --write, merges it into the host's file "
                    "(Claude Desktop: its claude_desktop_config.json; VS Code: .vscode/mcp.json in the current "
                    "directory; Cursor: ~/.cursor/mcp.json), keeping the other servers and backing the file up "
                    "first. Claude Code, Gemini CLI and Codex CLI also get hooks running `agent-memory hook HOST` "
                    "(project scope: .mcp.json and .claude/settings.json, .gemini/settings.json, or "
                    ".codex/config.toml and .codex/hooks.json, in the current directory; user scope: ~/.claude.json "
                    "and ~/.claude/settings.json, ~/.gemini/settings.json, or config.toml and hooks.json in "
                    "$CODEX_HOME, else ~/.codex). claude-code --plugin DIR writes a Claude Code plugin with the "
                    "same server and hooks, in a local marketplace at DIR, instead. With --check, runs the "
                    "installed hooks against a probe event each. Exit codes: 0 done (--check: every hook works), "
                    "1 a file cannot be read or written (--check: a hook is missing or fails), 2 invalid arguments.")
    setup.add_argument("host", choices=sorted(HOSTS))
    setup.add_argument("--agent-id", dest="setup_agent_id", metavar="ID",
                       help="the agent's id (default: the host's name; vscode-copilot for vscode)")
    setup.add_argument("--system-type", dest="setup_system_type", metavar="TYPE", default="sys1",
                       help="VSM system type sys1..sys5 (default sys1)")
    setup.add_argument("--team", dest="setup_team", metavar="TEAM", default="default", help="team (default: default)")
    setup.add_argument("--name", dest="setup_name", metavar="NAME", default="agent-memory",
                       help="the server's name in the host's file (default: agent-memory)")
    setup.add_argument("--project", dest="setup_project", metavar="NAME", default="auto",
                       help=f"{HOOKED}: the project the server and the hooks work in (default auto: the "
                            "git repository the host runs in, told apart by its remote, else its path)")
    setup.add_argument("--server-url", dest="setup_server_url", metavar="URL", default="",
                       help="claude-code, gemini-cli: a team's running `serve --http` (its MCP URL): the hooks and the "
                            "MCP entry use it under the token in --token-file instead of the embedded store")
    setup.add_argument("--token-file", dest="setup_token_file", metavar="FILE", default="",
                       help="with --server-url: the file (mode 600) holding your bearer token")
    setup.add_argument("--write", action="store_true", help="merge into the host's file (backed up first)")
    setup.add_argument("--check", dest="setup_check", action="store_true",
                       help=f"{HOOKED}: run the installed hooks against a probe event each and say "
                            "what works (stores nothing)")
    setup.add_argument("--file", dest="setup_file", metavar="FILE",
                       help="the file to merge into instead of the host's usual one "
                            "(not for claude-code and codex, which write two)")
    setup.add_argument("--scope", dest="setup_scope", choices=("project", "user"),
                       help=f"{HOOKED}: the project in the current directory (default) or every "
                            "project of this user")
    setup.add_argument("--plugin", dest="setup_plugin", metavar="DIR",
                       help="claude-code: a plugin (manifest, hooks, MCP server) in a local marketplace at DIR, "
                            "installed with `claude plugin install NAME --marketplace DIR`; with --write it is "
                            "written there")


def installed_command() -> list[str]:
    """How to launch this installation from anywhere: the absolute path of the `agent-memory`
    script that is running (or the one beside this Python), else this Python with `-m agent_memory`."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).stem == "agent-memory":
        found = argv0 if os.sep in argv0 or (os.altsep and os.altsep in argv0) else shutil.which(argv0)
        if found and Path(found).is_file():
            return [str(Path(found).resolve())]
    found = shutil.which("agent-memory", path=str(Path(sys.executable).parent)) or shutil.which("agent-memory")
    if found:
        return [str(Path(found).resolve())]
    # Not resolved: a virtual environment's python is a link whose target would leave the environment.
    return [os.path.abspath(sys.executable), "-m", "agent_memory"]


def server_entry(host: Host, command: list[str], agent_id: str, system_type: str, team: str) -> dict:
    entry: dict = {"type": "stdio"} if host.stdio_type else {}
    entry["command"] = command[0]
    entry["args"] = [*command[1:], "serve", "--agent-id", agent_id, "--system-type", system_type, "--team", team]
    return entry


def run(options: argparse.Namespace) -> int:
    from agent_memory.core.access.identity import parse_identity
    from agent_memory.core.model.errors import Forbidden
    from agent_memory.core.model.models import ALL_SKILLS

    host = HOSTS[options.host]
    agent_id = options.setup_agent_id or host.default_agent_id
    try:
        caller = parse_identity({"agent_id": agent_id, "system_type": options.setup_system_type,
                                 "team": options.setup_team}, default_skills=ALL_SKILLS)
    except Forbidden as exc:
        print(f"agent-memory: setup: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    if not options.setup_project.strip() or not PROJECT_NAME.match(options.setup_project):
        print("agent-memory: setup: --project must be auto or 1-64 characters of A-Z a-z 0-9 . _ -", file=sys.stderr)
        return EXIT_USAGE
    if not options.setup_name.strip():
        print("agent-memory: setup: --name must not be empty", file=sys.stderr)
        return EXIT_USAGE
    if options.setup_plugin is not None and (options.host != "claude-code" or options.setup_scope
                                             or options.setup_file or options.setup_check or options.setup_server_url):
        print("agent-memory: setup: --plugin is for claude-code, without --scope, --file, --check or --server-url "
              "(the plugin is its own files)", file=sys.stderr)
        return EXIT_USAGE
    command = installed_command()
    entry = server_entry(host, command, caller.agent_id, caller.system_type.value, caller.team)
    if options.setup_plugin is not None:
        return host_plugin.run(options, host, entry, command)
    if options.host in host_hooks.HOOK_HOSTS:
        if options.setup_check:
            return hook_check.check(options.host, host_hooks.hooks_file(options), options.setup_name)
        if options.host == "codex":
            if options.setup_server_url:
                print("agent-memory: setup: --server-url is for claude-code and gemini-cli (not yet codex)",
                      file=sys.stderr)
                return EXIT_USAGE
            return host_codex.run(options, host, entry, command)
        return host_hooks.run(options, host, entry, command)
    if options.setup_scope or options.setup_check or options.setup_project != "auto" or options.setup_server_url:
        flag = ("--scope" if options.setup_scope else "--check" if options.setup_check
                else "--project" if options.setup_project != "auto" else "--server-url")
        print(f"agent-memory: setup: {flag} is for {', '.join(host_hooks.HOOK_HOSTS)} only", file=sys.stderr)
        return EXIT_USAGE
    target = Path(options.setup_file).expanduser() if options.setup_file else host.config_file(options.host)
    if not options.write:
        print(json.dumps({host.servers_key: {options.setup_name: entry}}, indent=2))
        print(f"setup: add this to {target} (or run again with --write), then restart {host.title}",
              file=sys.stderr)
        return EXIT_OK
    try:
        replaced, backup = merge_into(target, host.servers_key, options.setup_name, entry)
    except SetupError as exc:
        print(f"agent-memory: setup: {exc}; nothing written. Without --write this command prints the lines to "
              "add by hand.", file=sys.stderr)
        return EXIT_FAILED
    done = "replaced" if replaced else "added"
    kept = f"; the previous file is kept as {backup}" if backup else ""
    print(f"setup: {done} server '{options.setup_name}' in {target}{kept}; restart {host.title} to use it",
          file=sys.stderr)
    return EXIT_OK


