"""`setup HOST --server-url URL --token-file FILE`: a developer's host on the team's shared
`serve --http`. The hooks capture into it and recall from it under the developer's own token
(`--hook-server-url`, `--hook-token-file`), and the host's MCP entry points at the same server,
with the token's header from `agent-memory token header` (run by the host on each connection,
where it trusts the workspace) or from the AGENT_MEMORY_TOKEN variable, and the project's header."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from agent_memory.hooks.token_file import read
from agent_memory.projects import identify
from agent_memory.setting_values import http_url

TOKEN_VARIABLE = "AGENT_MEMORY_TOKEN"
EXIT_OK, EXIT_USAGE = 0, 2


def problem(options: argparse.Namespace) -> str | None:
    """What is wrong with --server-url / --token-file (None: both fine, or neither given)."""
    url, token_file = options.setup_server_url, options.setup_token_file
    if not url and not token_file:
        return None
    if not url or not token_file:
        return "--server-url and --token-file go together"
    try:
        http_url(url)
    except ValueError as exc:
        return f"--server-url {exc}"
    try:  # a file others may read, or that holds no token
        read(str(Path(token_file).expanduser()), {})
    except ValueError as exc:
        return str(exc)
    return None


def server_entry(host: str, options: argparse.Namespace, command: list[str]) -> dict:
    """The host's MCP entry for the team's server: the URL, the token's header (from the file when
    the host runs headers helpers, else the variable) and, in a project, the project's header."""
    token_file = str(Path(options.setup_token_file).expanduser().resolve())
    headers = {"Authorization": f"Bearer ${{{TOKEN_VARIABLE}}}"}
    helper = [*command, "token", "header", "--file", token_file]
    if options.setup_scope != "user":  # the project's file: its project is known now
        segment = identify(Path.cwd(), options.setup_project).segment
        headers["X-Agent-Memory-Project"] = segment
        helper += ["--project", segment]
    if host == "gemini-cli":
        return {"httpUrl": options.setup_server_url, "headers": headers}
    return {"type": "http", "url": options.setup_server_url, "headers": headers,
            "headersHelper": shlex.join(helper)}


def hook_arguments(options: argparse.Namespace) -> list[str]:
    """The hook command's own settings for the team's server (its identity is the token's)."""
    return ["--hook-server-url", options.setup_server_url,
            "--hook-token-file", str(Path(options.setup_token_file).expanduser().resolve())]


def print_header(path: str, project: str | None) -> int:
    """`agent-memory token header`: the headers a host sends to the team's server."""
    try:
        token = read(str(Path(path).expanduser()), {})
    except ValueError as exc:
        print(f"agent-memory: token header: {exc}", file=sys.stderr)
        return EXIT_USAGE
    headers = {"Authorization": f"Bearer {token}"}
    if project:
        headers["X-Agent-Memory-Project"] = project
    sys.stdout.write(json.dumps(headers) + "\n")
    return EXIT_OK


def advice(options: argparse.Namespace) -> str:
    """What the user does once: the variable the MCP entry reads where the host runs no helper."""
    return (f"setup: the hooks use {options.setup_token_file}; for the MCP entry, also export "
            f"{TOKEN_VARIABLE}=\"$(cat {shlex.quote(options.setup_token_file)})\" in your shell profile (Claude Code "
            "runs the headers helper only in workspaces you trusted)")

