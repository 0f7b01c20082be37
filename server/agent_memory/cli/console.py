"""`agent-memory console`: the memory console for a single-user install, on 127.0.0.1 only.

It prints a sign-in URL carrying a one-time code in its fragment (`console/session.py`: single use,
valid `console_code_seconds`), never a token; the page trades the code for an operator session
token it keeps in memory only. Enter on the terminal prints a URL with a fresh code. `--open` hands
the browser a private file (mode 0600, in the data directory) that redirects to that URL, so not even
the code appears on the browser's command line; the file is removed once the code has expired."""

from __future__ import annotations

import argparse
import dataclasses
import os
import threading
import webbrowser
from pathlib import Path

from agent_memory.config import Settings
from agent_memory.console.session import SignInCodes

LOOPBACK = "127.0.0.1"
REDIRECT = """<!doctype html>
<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url={url}"><title>agent-memory console</title></head>
<body><p><a href="{url}">Open the agent-memory console</a></p></body></html>
"""


def sign_in_url(port: int, code: str) -> str:
    return f"http://{LOOPBACK}:{port}/console/#code={code}"


def announce(settings: Settings, codes: SignInCodes) -> str:
    """Print a sign-in URL with a new code; returns the URL."""
    url = sign_in_url(settings.http_port, codes.issue(settings.console_code_seconds))
    print(f"memory console: {url}\n(a one-time sign-in code, valid {settings.console_code_seconds} s; press Enter "
          "here for a new one; Ctrl-C stops the console)", flush=True)
    return url


def _new_codes_on_enter(settings: Settings, codes: SignInCodes) -> None:
    """Each line read from the terminal prints a URL with a fresh code, until end of input. Reads
    file descriptor 0 directly: a daemon thread blocked in `sys.stdin` would hold its buffer's lock
    when the interpreter shuts down."""
    while True:
        try:
            chunk = os.read(0, 4096)
        except OSError:  # no standard input
            return
        if not chunk:
            return
        for _ in range(chunk.count(b"\n")):
            announce(settings, codes)


def redirect_file(settings: Settings, url: str) -> Path:
    """A file only this user can read that sends a browser to `url`."""
    folder = settings.data_path
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"console-sign-in-{os.getpid()}.html"
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(REDIRECT.format(url=url))
    return path


def run_console(options: argparse.Namespace, settings: Settings) -> int:
    from agent_memory.cli.server_start import run_server

    settings = dataclasses.replace(settings, transport="http", http_host=LOOPBACK)
    opened: list[Path] = []
    codes = SignInCodes()  # this process's codes: printed here, redeemed by the server's console

    def sign_in() -> None:  # once the port and the store are known to work
        url = announce(settings, codes)
        if options.open:
            opened.append(redirect_file(settings, url))
            threading.Timer(1.0, webbrowser.open, args=(opened[0].as_uri(),)).start()
            remove = threading.Timer(settings.console_code_seconds + 5, opened[0].unlink, kwargs={"missing_ok": True})
            remove.daemon = True
            remove.start()
        threading.Thread(target=_new_codes_on_enter, args=(settings, codes), daemon=True,
                         name="console-sign-in-codes").start()

    try:
        return run_server(settings, announce=sign_in, codes=codes)
    finally:
        for path in opened:
            path.unlink(missing_ok=True)
