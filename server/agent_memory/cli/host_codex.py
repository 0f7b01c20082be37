"""`agent-memory setup codex`: the MCP server in Codex's `config.toml` (`[mcp_servers.<name>]`,
TOML: host_toml.py) and the hooks running `agent-memory hook codex` in its `hooks.json`, both in
`.codex/` of the current directory (project scope) or in `$CODEX_HOME`, else `~/.codex` (user scope).

Codex starts an MCP server with a few variables only (HOME, PATH, ...); the entry names the ones
agent-memory reads (`env_vars`), so the server reads the same settings as the hooks, which get
the whole environment. Codex runs no hook until the user trusts it: setup says how.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys

from agent_memory.cli.host_files import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Host, SetupError, load_object, write_text
from agent_memory.cli.host_hooks import hooked, host_files, put_hooks
from agent_memory.cli.host_toml import load_text, put_server, table
from agent_memory.config import setting_names
from agent_memory.setting_values import ENV_PREFIX, env_name

SERVERS_KEY = "mcp_servers"


def forwarded() -> list[str]:
    """The variables agent-memory reads: its config file, every setting, the default data directory's base."""
    return [ENV_PREFIX + "CONFIG", *(env_name(n) for n in setting_names()), "XDG_DATA_HOME"]


def trust_note(scope: str) -> str:
    """How a user lets Codex run the hooks (it skips hooks nobody has trusted, silently under exec)."""
    project = ("; and Codex reads .codex/ here only in a project you trusted (it asks when it starts here)"
               if scope == "project" else "")
    return ("setup: Codex runs a new or changed hook only once you trust it: start codex, open /hooks and trust the "
            f"agent-memory hooks (codex exec --dangerously-bypass-hook-trust skips that for one run){project}")


def run(options: argparse.Namespace, host: Host, entry: dict, command: list[str]) -> int:
    scope = options.setup_scope or "project"
    config_file, hooks_file = host_files("codex", scope)
    if options.setup_file:
        print(f"agent-memory: setup: --file names one file, and codex uses two ({config_file} and {hooks_file}); "
              "choose them with --scope", file=sys.stderr)
        return EXIT_USAGE
    name = options.setup_name
    entry, groups = hooked(options, entry, command)
    entry = {**entry, "env_vars": forwarded()}
    if not options.write:
        print(f"# {config_file}\n{table((SERVERS_KEY, name), entry)}")
        print(f"# {hooks_file}\n" + json.dumps({"hooks": {event: [group] for event, group in groups.items()}},
                                                indent=2))
        print("setup: add the table to the first file and merge the object into the second (or run again with "
              f"--write), then restart {host.title}", file=sys.stderr)
        print(trust_note(scope), file=sys.stderr)
        return EXIT_OK
    try:  # both files parsed and merged before either is written
        config_path, text, data = load_text(config_file)
        new_text, replaced_server = put_server(config_path, text, data, SERVERS_KEY, name, entry)
        hooks_path, hooks = load_object(hooks_file)
        before = copy.deepcopy(hooks)
        replaced_hooks = put_hooks(hooks_path, hooks, groups, name)
    except SetupError as exc:
        print(f"agent-memory: setup: {exc}; nothing written. Without --write this command prints what to add by "
              "hand.", file=sys.stderr)
        return EXIT_FAILED
    writes = [(config_path, new_text if new_text != text else None,
               f"{'replaced' if replaced_server else 'added'} server '{name}'", f"this server '{name}'"),
              (hooks_path, json.dumps(hooks, indent=2, ensure_ascii=False) + "\n" if hooks != before else None,
               f"{'replaced' if replaced_hooks else 'added'} hooks on {', '.join(groups)}", "these hooks")]
    written = False
    for path, content, done, what in writes:
        if content is None:
            print(f"setup: {path} already has {what}; left as it is", file=sys.stderr)
            continue
        try:
            backup = write_text(path, content)
        except SetupError as exc:
            print(f"agent-memory: setup: {exc}" + ("; the file named above was written" if written else
                                                   "; nothing written"), file=sys.stderr)
            return EXIT_FAILED
        written = True
        kept = f"; the previous file is kept as {backup}" if backup else ""
        print(f"setup: {done} in {path}{kept}", file=sys.stderr)
    print(f"setup: restart {host.title} to use it", file=sys.stderr)
    print(trust_note(scope), file=sys.stderr)
    return EXIT_OK
