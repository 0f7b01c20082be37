"""The `agent-memory` command line."""

from __future__ import annotations

import argparse
import json
import sys
import time
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
    options = _parser().parse_args(argv)
    try:
        settings = _settings(options)
        if options.command == "serve":
            from agent_memory.serve import serve

            serve(settings)
            return EXIT_OK
        if options.command == "reindex":
            return _reindex(settings)
        if options.command == "prune":
            return _prune(settings, options.dry_run)
        if options.command == "erase":
            return _erase(settings, options)
        return _token(options, settings)
    except ConfigError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _reindex(settings: Settings) -> int:
    import anyio

    from agent_memory.logging import configure_logging
    from agent_memory.operations import OperationFailed, reindex

    configure_logging("warning", settings.log_format)
    try:
        anyio.run(reindex, settings)
    except OperationFailed as exc:
        print(f"agent-memory: reindex failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _print_victims(victims: list) -> None:  # noqa: ANN001 - core Victim rows
    for victim in victims:
        print(f"{victim.entry_id}\t{victim.scope}\t{victim.namespace}\t{victim.reason}")


def _prune(settings: Settings, dry_run: bool) -> int:
    import anyio

    from agent_memory.logging import configure_logging
    from agent_memory.operations import prune

    configure_logging("warning", settings.log_format)
    victims = anyio.run(lambda: prune(settings, dry_run=dry_run))
    _print_victims(victims)
    reasons: dict[str, int] = {}
    for victim in victims:
        reasons[victim.reason] = reasons.get(victim.reason, 0) + 1
    detail = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
    verb = "would delete" if dry_run else "deleted"
    print(f"prune: {verb} {len(victims)} entries" + (f" ({detail})" if detail else ""), file=sys.stderr)
    return EXIT_OK


def _erase(settings: Settings, options: argparse.Namespace) -> int:
    import anyio

    from agent_memory.core.errors import InvalidParams
    from agent_memory.core.models import Scope
    from agent_memory.logging import configure_logging
    from agent_memory.operations import OperationFailed, erase, erase_plan

    configure_logging("warning", settings.log_format)
    scope, namespace, cascade = Scope(options.erase_scope), options.erase_namespace, options.cascade
    try:
        planned = anyio.run(lambda: erase_plan(settings, scope, namespace, cascade))
    except InvalidParams as exc:
        print(f"agent-memory: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    where = f"{scope.value} namespace {namespace}" + (" and every namespace under it" if cascade else "")
    namespaces = sorted({v.namespace for v in planned})
    if options.dry_run:
        _print_victims(planned)
        print(f"erase: would erase {len(planned)} entries in {where} ({len(namespaces)} namespaces)",
              file=sys.stderr)
        return EXIT_OK
    if not planned:
        print(f"erase: nothing to erase in {where}", file=sys.stderr)
        return EXIT_OK
    if not options.yes:
        print(f"Erase {len(planned)} entries in {where} ({', '.join(namespaces[:5])}"
              f"{', ...' if len(namespaces) > 5 else ''}) from SQLite and the vector index? This cannot be undone. "
              "Type 'yes' to confirm: ", end="", file=sys.stderr, flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            print("erase: aborted, nothing erased", file=sys.stderr)
            return EXIT_FAILED
    try:
        erased, vectors = anyio.run(lambda: erase(settings, scope, namespace, cascade))
    except OperationFailed as exc:
        print(f"agent-memory: erase: {exc}", file=sys.stderr)
        return EXIT_FAILED
    _print_victims(erased)
    print(f"erase: erased {len(erased)} entries in {where}; {vectors}", file=sys.stderr)
    return EXIT_OK


def _token(options: argparse.Namespace, settings: Settings) -> int:
    from agent_memory.auth import load_secret
    from agent_memory.core.errors import Forbidden
    from agent_memory.core.identity import parse_identity
    from agent_memory.core.models import ALL_SKILLS
    from agent_memory.core.tokens import TokenError, issue_token, verify_token

    secret = load_secret(settings)
    now = int(time.time())
    if options.token_command == "verify":
        try:
            claims = verify_token(options.token.strip(), secret, now=now)
        except TokenError as exc:
            print(f"agent-memory: invalid token: {exc}", file=sys.stderr)
            return EXIT_FAILED
        print(json.dumps(claims.as_dict(), indent=2))
        return EXIT_OK
    raw: dict[str, object] = {"agent_id": options.token_agent_id, "system_type": options.token_system_type,
                              "team": options.token_team}
    if options.token_skills is not None:
        raw["skills"] = options.token_skills
    try:
        caller = parse_identity(raw, default_skills=ALL_SKILLS)
        token = issue_token(caller, secret, now=now, ttl_seconds=options.ttl)
    except (Forbidden, ValueError) as exc:
        print(f"agent-memory: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return EXIT_USAGE
    print(token)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
