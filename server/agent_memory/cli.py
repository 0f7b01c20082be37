"""The `agent-memory` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from agent_memory.config import ConfigError, Settings, flag_settings, load_settings, setting_help

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _add_settings(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="a TOML file of settings (default: $MEMORY_CONFIG, else none)")
    for name, flags in flag_settings():
        parser.add_argument(*flags, dest=name, default=None, help=setting_help(name))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-memory", description="Scoped, permissioned memory for AI agents (MCP)."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the MCP server (stdio unless --http)")
    serve.add_argument("--http", action="store_const", const="http", dest="transport",
                       help="serve MCP streamable HTTP at /mcp (bearer tokens required)")
    _add_settings(serve)

    token = commands.add_parser("token", help="issue or verify bearer tokens for the HTTP transport")
    token_commands = token.add_subparsers(dest="token_command", required=True)
    issue = token_commands.add_parser("issue", help="print a signed token for a caller")
    issue.add_argument("--agent-id", dest="token_agent_id", required=True)
    issue.add_argument("--system-type", dest="token_system_type", required=True, help="sys1..sys5")
    issue.add_argument("--team", dest="token_team", required=True)
    issue.add_argument("--skills", dest="token_skills", default=None,
                       help="granted tools, comma-separated (default: all three)")
    issue.add_argument("--ttl", type=int, default=30 * 24 * 3600, help="lifetime in seconds (default 30 days)")
    reindex = commands.add_parser("reindex", help="rebuild the vector index from SQLite (server stopped)")
    _add_settings(reindex)
    prune = commands.add_parser(
        "prune", help="delete expired entries, entries past their layer's retention and the excess of namespaces "
                      "over their limit (audited)",
        description="Runs the pruner once. Prints one line per entry (id, scope, namespace, reason) on stdout "
                    "and a summary on stderr. Exit codes: 0 done, 1 failed, 2 invalid setting.")
    prune.add_argument("--dry-run", action="store_true", help="only list what would be deleted")
    _add_settings(prune)
    erase = commands.add_parser(
        "erase", help="privacy erase: delete a namespace from SQLite and the vector index (audited)",
        description="Deletes every entry of one namespace (with --cascade also every namespace under it, N/...) "
                    "from SQLite and the vector index, one audit row per entry. Asks for confirmation unless "
                    "--yes. Exit codes: 0 erased (or nothing to erase), 1 aborted or failed, 2 invalid arguments.")
    erase.add_argument("--scope", dest="erase_scope", required=True, choices=["agent", "team", "global"])
    erase.add_argument("--namespace", dest="erase_namespace", required=True)
    erase.add_argument("--cascade", action="store_true", help="also every namespace under it (N/...)")
    erase.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    erase.add_argument("--dry-run", action="store_true", help="only list what would be erased")
    _add_settings(erase)
    export = commands.add_parser(
        "export", help="write entries as JSON lines (every field, one entry a line)",
        description="Writes entries in the order they were written, one JSON object a line with every field "
                    "(schemas/memory_record.json). Exit codes: 0 done, 1 failed, 2 invalid arguments.")
    export.add_argument("--scope", dest="select_scope", choices=["agent", "team", "global"])
    export.add_argument("--namespace", dest="select_namespace", help="only this namespace")
    export.add_argument("--cascade", action="store_true", help="with --namespace: also every namespace under it")
    export.add_argument("--output", "-o", help="write to this file instead of stdout")
    _add_settings(export)
    import_ = commands.add_parser(
        "import", help="read entries from JSON lines (a file, or stdin), as written by export",
        description="Checks every line first; a bad line is reported with its line number. By default nothing "
                    "is imported when any line is bad; --skip-bad imports the good ones. Ids, versions, etags "
                    "and dates are kept, so export -> import -> export gives the same lines. Progress on stderr. "
                    "Exit codes: 0 all imported, 1 bad lines (none imported, or some skipped) or failure, "
                    "2 invalid arguments.")
    import_.add_argument("file", nargs="?", help="JSON lines file (default: stdin)")
    import_.add_argument("--skip-bad", action="store_true", help="import the good lines, report and skip the bad")
    _add_settings(import_)
    audit = commands.add_parser(
        "audit", help="print audit rows as JSON lines, oldest first",
        description="Who did what, where, when (never content). Exit codes: 0, 1 on failure, 2 invalid arguments.")
    audit.add_argument("--since", help="only rows at or after this ISO-8601 time")
    audit.add_argument("--agent", help="only this agent id")
    audit.add_argument("--action", help="only this action (create, read, update, delete, list, promote, "
                                        "memory_retrieval, log, compact, reflect, prune, erase, import, ...)")
    audit.add_argument("--outcome", help="only this outcome (ok, denied, ...)")
    audit.add_argument("--limit", type=int, help="at most this many rows")
    _add_settings(audit)
    warnings = commands.add_parser(
        "warnings", help="summarise WARNING and ERROR lines the server logged since the last call",
        description="Reads <data_dir>/logs/agent-memory.log (rotated). Exit codes: 0 none, 1 some were logged, "
                    "2 invalid arguments.")
    warnings.add_argument("--all", action="store_true", help="everything still kept, not only what is new")
    warnings.add_argument("--lines", type=int, default=20, help="how many of the latest lines to show (default 20)")
    _add_settings(warnings)
    stats = commands.add_parser(
        "stats", help="entries per scope, layer and namespace, sizes on disk, vector outbox backlog, vector task "
                 "state and set-aside index copies (JSON)",
        description="Exit codes: 0, 1 on failure, 2 invalid setting.")
    _add_settings(stats)
    verify = token_commands.add_parser("verify", help="print a token's claims, or why it is invalid")
    verify.add_argument("token")
    for sub in (issue, verify):
        sub.add_argument("--config", help="a TOML file of settings")
        sub.add_argument("--data-dir", dest="data_dir", default=None, help=setting_help("data_dir"))
    return parser


def _settings(options: argparse.Namespace) -> Settings:
    names = [name for name, _ in flag_settings()]
    overrides = {name: getattr(options, name, None) for name in names}
    return load_settings(config_file=options.config, overrides=overrides)


def main(argv: Sequence[str] | None = None) -> int:
    from agent_memory import cli_commands as commands

    options = _parser().parse_args(argv)
    try:
        settings = _settings(options)
        if options.command == "serve":
            from agent_memory.serve import serve

            serve(settings)
            return EXIT_OK
        if options.command == "token":
            return commands.token(options, settings)
        return commands.HANDLERS[options.command](options, settings)
    except ConfigError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
