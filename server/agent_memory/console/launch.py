"""`agent-memory console`: the memory console for a single-user install, on 127.0.0.1 only.

It mints its own operator token (12 hours, the launch identity's agent id and team) and prints a
sign-in URL carrying the token in its fragment: browsers never send a fragment to the server, and
the page moves it into the tab's session storage and out of the address bar at once."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import threading
import time
import webbrowser

import anyio

from agent_memory.config import Settings

EXIT_OK, EXIT_USAGE, EXIT_UNAVAILABLE = 0, 2, 3
TOKEN_TTL_SECONDS = 12 * 3600
LOOPBACK = "127.0.0.1"


def sign_in_url(port: int, token: str) -> str:
    return f"http://{LOOPBACK}:{port}/console/#token={token}"


def operator_token(settings: Settings, *, now: int) -> str:
    from agent_memory.auth import load_secret
    from agent_memory.core.models import ALL_SKILLS, SystemType
    from agent_memory.core.tokens import issue_token

    launcher = settings.launch_caller()
    caller = dataclasses.replace(launcher, system_type=SystemType.SYS4, skills=ALL_SKILLS, operator=True)
    return issue_token(caller, load_secret(settings), now=now, ttl_seconds=TOKEN_TTL_SECONDS)


def run_console(options: argparse.Namespace, settings: Settings) -> int:
    from agent_memory.serve import PortUnavailable, StartFailed, bind_http, check_store, serve

    settings = dataclasses.replace(settings, transport="http", http_host=LOOPBACK)
    try:
        bind_http(LOOPBACK, settings.http_port).close()  # say so now, before printing a URL that cannot work
    except PortUnavailable as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    anyio.run(check_store, settings)  # a store that cannot be opened: one line and exit 2, before the URL
    url = sign_in_url(settings.http_port, operator_token(settings, now=int(time.time())))
    print(f"memory console: {url}\n(an operator token valid for 12 hours, audited on every use; "
          "Ctrl-C stops the console)", flush=True)
    if options.open:
        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    try:
        serve(settings)
    except (PortUnavailable, StartFailed) as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    return EXIT_OK
