"""The `agent-memory` command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from agent_memory.config import ConfigError, Settings, flag_settings, load_settings, setting_help
from agent_memory.hooks.hosts import HOSTS as HOOK_HOSTS

EXIT_OK, EXIT_USAGE = 0, 2  # a server that cannot start: server_start.EXIT_UNAVAILABLE (3)

# The settings each operator command reads; the server's other settings are listed under `serve`.
STORE = ("data_dir", "sqlite_path", "sqlite_busy_timeout_ms")
INDEX = ("vector_backend", "chroma_path", "chroma_host", "chroma_port", "chroma_ssl")
EMBEDDING = ("embedding_model_dir", "embedding_int8_compute")
RETENTION = ("max_entries_per_namespace", "retention_working_days", "retention_session_days",
             "retention_long_term_days", "retention_meta_days", "digest_max_chars", "digest_chunk_turns")
SETTINGS_NOTE = ("Every setting is also a MEMORY_<NAME> environment variable or a key of the --config file; the "
                 "table in docs/configuration.md lists them all.")


def _add_settings(parser: argparse.ArgumentParser, *names: str) -> None:
    """`--config` and the flags of the settings `names` (all of them when none are named)."""
    group = parser.add_argument_group("settings", SETTINGS_NOTE)
    group.add_argument("--config", help="a TOML file of settings (default: $MEMORY_CONFIG, else none)")
    for name, flags in flag_settings():
        if not names or name in names:
            group.add_argument(*flags, dest=name, default=None, metavar="VALUE", help=setting_help(name))


DISTRIBUTION = "vsm-agent-memory"  # the distribution (pyproject.toml, installed from a clone)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # running from a source tree that was never installed
        from agent_memory import __version__

        return __version__


class _VersionAction(argparse._VersionAction):
    """`--version`, looked up only when asked for (reading the installed metadata costs a host's
    `serve` start some 15 ms)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        self.version = f"%(prog)s {_version()}"
        super().__call__(parser, namespace, values, option_string)


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; `only="serve"` builds that command alone (what a host's start parses),
    the same as in the whole parser."""
    parser = argparse.ArgumentParser(
        prog="agent-memory", description="Scoped, permissioned memory for AI agents (MCP)."
    )
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the MCP server (stdio unless --http)")
    serve.add_argument("--http", action="store_const", const="http", dest="transport",
                       help="serve MCP streamable HTTP at /mcp (bearer tokens required)")
    _add_settings(serve)
    if only == "serve":
        return parser
    from agent_memory.cli import host_setup

    token = commands.add_parser("token", help="issue, verify, list or revoke bearer tokens for the HTTP transport",
                                description="Tokens are recorded (id and claims, never the token) in the store the "
                                            "servers use; run these commands with the servers' store settings.")
    token_commands = token.add_subparsers(dest="token_command", required=True)
    issue = token_commands.add_parser("issue", help="print a signed token for a caller (its id on stderr)")
    issue.add_argument("--agent-id", dest="token_agent_id", required=True)
    issue.add_argument("--system-type", dest="token_system_type", default=None,
                       help="sys1..sys5 (required, except with --operator: default sys4)")
    issue.add_argument("--team", dest="token_team", default=None,
                       help="the caller's team (required, except with --operator: default 'operators')")
    issue.add_argument("--operator", dest="token_operator", action="store_true",
                       help="an operator token for the memory console: reads and edits every scope, audited on every "
                            "use; refused on /mcp")
    issue.add_argument("--skills", dest="token_skills", default=None,
                       help="granted tools, comma-separated (default: all three)")
    issue.add_argument("--ttl", type=int, default=30 * 24 * 3600, help="lifetime in seconds (default 30 days)")
    reindex = commands.add_parser("reindex", help="rebuild the vector index from SQLite (server stopped)")
    _add_settings(reindex, *STORE, *INDEX, *EMBEDDING)
    prune = commands.add_parser(
        "prune", help="delete expired entries, entries past their layer's retention and the excess of namespaces "
                      "over their limit (audited)",
        description="Runs the pruner once. A session's turns go only after the session is kept: distilled "
                    "into facts and rules and digested, word for word less small talk, into long-term memory "
                    "(a session that cannot be kept keeps its turns, with a warning). Prints one line per "
                    "entry (id, scope, namespace, reason) on stdout and a summary on stderr. Exit codes: 0 "
                    "done, 1 failed, 2 invalid setting.")
    prune.add_argument("--dry-run", action="store_true", help="only list what would be deleted")
    _add_settings(prune, *STORE, *RETENTION)
    erase = commands.add_parser(
        "erase", help="privacy erase: delete a namespace from SQLite and the vector index (audited)",
        description="Deletes every entry of one namespace (with --cascade also every namespace under it, N/...; "
                    "with --session-id only that session's entries there) from SQLite and the vector index, one "
                    "audit row per entry. Asks for confirmation unless --yes. Exit codes: 0 erased (or nothing to "
                    "erase), 1 aborted or failed, 2 invalid arguments.")
    erase.add_argument("--scope", dest="erase_scope", required=True, choices=["agent", "team", "global"])
    erase.add_argument("--namespace", dest="erase_namespace", required=True)
    erase.add_argument("--cascade", action="store_true", help="also every namespace under it (N/...)")
    erase.add_argument("--session-id", dest="erase_session", metavar="SESSION",
                       help="only the entries of this session (session_id) in N (with --cascade: and under it)")
    erase.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    erase.add_argument("--dry-run", action="store_true", help="only list what would be erased")
    _add_settings(erase, *STORE, *INDEX)
    export = commands.add_parser(
        "export", help="write entries as JSON lines (every field, one entry a line)",
        description="Writes entries in the order they were written, one JSON object a line with every field "
                    "(schemas/memory_record.json). Exit codes: 0 done, 1 failed, 2 invalid arguments.")
    export.add_argument("--scope", dest="select_scope", choices=["agent", "team", "global"])
    export.add_argument("--namespace", dest="select_namespace", help="only this namespace")
    export.add_argument("--cascade", action="store_true", help="with --namespace: also every namespace under it")
    export.add_argument("--output", "-o", help="write to this file instead of stdout")
    _add_settings(export, *STORE)
    from agent_memory.cli import imports as import_command

    import_ = commands.add_parser("import", help=import_command.HELP, description=import_command.DESCRIPTION)
    import_command.add_arguments(import_)
    _add_settings(import_, *STORE, "max_content_chars")
    audit = commands.add_parser(
        "audit", help="print audit rows as JSON lines, oldest first",
        description="Who did what, where, when (never content). Exit codes: 0, 1 on failure, 2 invalid arguments.")
    audit.add_argument("--since", help="only rows at or after this ISO-8601 time")
    audit.add_argument("--agent", help="only this agent id")
    audit.add_argument("--action", help="only this action (create, read, update, delete, list, promote, "
                                        "memory_retrieval, log, compact, reflect, prune, erase, import, ...)")
    audit.add_argument("--outcome", help="only this outcome (ok, denied, ...)")
    audit.add_argument("--limit", type=int, help="at most this many rows")
    _add_settings(audit, *STORE)
    warnings = commands.add_parser(
        "warnings", help="summarise WARNING and ERROR lines the server logged since the last call",
        description="Reads <data_dir>/logs/agent-memory.log (rotated). Exit codes: 0 none, 1 some were logged, "
                    "2 invalid arguments.")
    warnings.add_argument("--all", action="store_true", help="everything still kept, not only what is new")
    warnings.add_argument("--lines", type=int, default=20, help="how many of the latest lines to show (default 20)")
    _add_settings(warnings, "data_dir")
    stats = commands.add_parser(
        "stats", help="entries per scope, layer and namespace, sizes on disk, vector outbox backlog, vector task "
                 "state and set-aside index copies (JSON)",
        description="Exit codes: 0, 1 on failure, 2 invalid setting.")
    _add_settings(stats, *STORE, *INDEX)
    host_setup.add_parser(commands)
    hook = commands.add_parser(
        "hook", help="run a host's hook event (event JSON on stdin): recall into the prompt, capture the session",
        description="What a host's hooks run (agent-memory setup claude-code, gemini-cli or codex writes them): "
                    "SessionStart and UserPromptSubmit print the memories to add to the model's context, Stop, "
                    "PreCompact and SessionEnd log the new transcript turns and reflect. Always exits 0; problems "
                    "are one line on stderr. A helper process holding the store open serves it (started on first use).")
    hook.add_argument("host", choices=tuple(HOOK_HOSTS))
    _add_settings(hook, *STORE, "agent_id", "system_type", "team", "skills", "vector_backend", "hook_budget_chars",
                  "hook_start_chars", "project", "hook_server_url", "hook_token_file", "hook_idle_minutes")
    console = commands.add_parser(
        "console", help="open the memory console in a browser on this data directory (127.0.0.1 only)",
        description="Serves the memory console (and MCP over HTTP) on 127.0.0.1 with this data directory and "
                    "prints a sign-in URL carrying a one-time code (never a token; Enter prints a new one), which "
                    "the page trades for a 12-hour operator session token kept in memory only. It may run beside "
                    "other servers on the same data directory (one of them owns the vector index and answers the "
                    "others' searches by meaning). Exit codes: 0 stopped, 2 invalid setting, 3 port unavailable.")
    console.add_argument("--open", action="store_true",
                         help="also open it in the default browser (through a private redirect file, so the code is "
                              "not on the browser's command line)")
    _add_settings(console, *STORE, *INDEX, *EMBEDDING, "http_port", "log_level", "console_code_seconds")
    verify = token_commands.add_parser("verify", help="print a token's claims, or why it is invalid (revoked too)")
    verify.add_argument("token")
    listing = token_commands.add_parser(
        "list", help="print the recorded tokens as JSON lines, oldest first (id, agent, team, system type, skills, "
                     "operator, kind, issued, expires, revoked)", description="Exit codes: 0, 2 invalid setting.")
    listing.add_argument("--agent", dest="token_list_agent", help="only this agent's tokens")
    revoke = token_commands.add_parser(
        "revoke", help="revoke a token by id, or every token of an agent issued until now (audited)",
        description="Servers sharing this store refuse a revoked token (401 'token revoked') from their next request. "
                    "Exit codes: 0 revoked, 1 no such token recorded, 2 invalid arguments or setting.")
    revoke.add_argument("token_id", nargs="?", help="the token's id (tok_..., from `token list` or `token issue`)")
    revoke.add_argument("--agent", dest="token_revoke_agent",
                        help="every token of this agent issued until now, recorded or not (also tokens without an id)")
    for sub in (issue, verify, listing, revoke):
        _add_settings(sub, *STORE)
    header = token_commands.add_parser(
        "header", help="print the HTTP headers for a team server's token kept in a private file (JSON)",
        description="What a host's headersHelper runs (setup HOST --server-url writes it): prints "
                    '{"Authorization": "Bearer <token>"} (and the project header with --project) for the token in '
                    "FILE, refused when others may read FILE. Exit codes: 0, 2 no usable token file.")
    header.add_argument("--file", dest="token_header_file", required=True, metavar="FILE")
    header.add_argument("--project", dest="token_header_project", metavar="SEGMENT",
                        help="the project the host's session works in (X-Agent-Memory-Project)")
    return parser


def _settings(options: argparse.Namespace) -> Settings:
    names = [name for name, _ in flag_settings()]
    overrides = {name: getattr(options, name, None) for name in names}
    return load_settings(config_file=options.config, overrides=overrides)


_PATH_WORDS = ("path", "dir", "file", "output", "config")  # arguments naming files: any bytes the OS allows


def _unstorable_argument(parser: argparse.ArgumentParser, options: argparse.Namespace) -> str | None:
    """Why an argument cannot be used (the text rule, core/model/text.py: bytes that are not UTF-8 arrive
    as lone surrogates), else None. File names are left to the OS."""
    from agent_memory.core.model.text import text_fault

    for dest, value in vars(options).items():
        if any(word in dest for word in _PATH_WORDS):
            continue
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and (fault := text_fault(text)) is not None:
                return f"{_flags(parser).get(dest, dest)} {fault}"
    return None


def _flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each argument's name as typed (`--namespace`), by its dest, subcommands included."""
    found: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.update({k: v for k, v in _flags(sub).items() if k not in found})
        else:
            found.setdefault(action.dest, max(action.option_strings, key=len) if action.option_strings else action.dest)
    return found


def _exit_now(code: int) -> None:
    """End the process at once after a stdio server stopped cleanly. Everything it wrote is
    already closed (the store, the audit log, the vector index; every acknowledged write is in
    SQLite): what is left is tearing the interpreter down (Chroma, ONNX Runtime and some thousand
    modules), 0.2-0.5 s that a host waiting about 0.5 s before SIGKILL does not give."""
    import logging

    logging.shutdown()  # the warnings file's handler
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def main(argv: Sequence[str] | None = None, *, own_process: bool = False) -> int:
    """`own_process`: this is the `agent-memory` process (not a caller's), which may end at once
    once a stdio server has stopped."""
    args = list(sys.argv[1:] if argv is None else argv)
    serving = args[:1] == ["serve"] and not {"-h", "--help"} & set(args)
    parser = _parser("serve" if serving else None)
    options = parser.parse_args(args)
    unstorable = _unstorable_argument(parser, options)
    if unstorable is not None:
        print(f"agent-memory: {unstorable}", file=sys.stderr)
        return EXIT_USAGE
    if options.command == "setup":
        from agent_memory.cli import host_setup

        return host_setup.run(options)
    if options.command == "token" and options.token_command == "header":  # no store, no secret
        from agent_memory.cli.team_server import print_header

        return print_header(options.token_header_file, options.token_header_project)
    if options.command == "hook":
        from agent_memory.hooks.client import main as hook

        return hook([options.host, *(argv if argv is not None else sys.argv[1:])[2:]])
    try:
        settings = _settings(options)
        if options.command == "serve":
            from agent_memory.cli.server_start import run_server

            code = run_server(settings)
            if code == EXIT_OK and settings.transport != "http" and own_process:
                _exit_now(EXIT_OK)
            return code
        if options.command == "token":
            from agent_memory.cli import tokens as token_commands

            return token_commands.run(options, settings)
        if options.command == "console":
            from agent_memory.cli.console import run_console

            return run_console(options, settings)
        from agent_memory.cli import commands

        return commands.HANDLERS[options.command](options, settings)
    except ConfigError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
