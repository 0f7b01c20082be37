"""The `agent-memory` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from agent_memory.config import ConfigError, Settings, flag_name, load_settings, setting_help, setting_names


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-memory", description="Scoped, permissioned memory for AI agents (MCP)."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the MCP server (stdio)")
    serve.add_argument("--config", help="a TOML file of settings (default: $MEMORY_CONFIG, else none)")
    for name in setting_names():
        serve.add_argument(flag_name(name), dest=name, default=None, help=setting_help(name))
    return parser


def _settings(options: argparse.Namespace) -> Settings:
    overrides = {name: getattr(options, name) for name in setting_names()}
    return load_settings(config_file=options.config, overrides=overrides)


def main(argv: Sequence[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    try:
        settings = _settings(options)
    except ConfigError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 2
    if options.command == "serve":
        from agent_memory.serve import serve_stdio

        serve_stdio(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
