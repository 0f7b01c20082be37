"""A small Chrome DevTools Protocol driver for Debian's chromium (no browser download): launch
headless with a fresh profile, then evaluate JavaScript in the page and wait for conditions."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "--remote-allow-origins=*"]


def why_no_browser() -> str | None:
    """None when the browser test can run, else the reason it cannot."""
    if shutil.which(CHROMIUM) is None:
        return f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium; .ci/run does as root)"
    try:
        import websocket  # noqa: F401
    except ImportError:
        return "the websocket-client package is missing: pip install -e '.[test]'"
    return None


class Page:
    def __init__(self, socket: Any) -> None:
        self._socket = socket
        self._ids = itertools.count(1)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        message_id = next(self._ids)
        self._socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv())
            if message.get("id") == message_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 15) -> Any:
        """The value of `expression` once it is truthy, polling every 50 ms for `timeout` s at most."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except RuntimeError:  # the page is still loading (an element not there yet)
                value = None
            if value not in (None, False, "", 0):  # an element comes back as {}: found
                return value
            if time.monotonic() > deadline:
                status = self.evaluate("document.getElementById('status')?.textContent")
                shown = self.evaluate("location.href + ' | ' + (document.getElementById('main')?.innerText ?? '')")
                raise AssertionError(f"timed out waiting for {expression!r} (status line: {status!r}; page: "
                                     f"{str(shown)[:600]!r})")
            time.sleep(0.05)

    def goto(self, url: str) -> None:
        """Navigate; returns once the new document (or fragment) is there and loaded."""
        self.send("Page.navigate", url=url)
        self.wait_for(f"location.href.startsWith({json.dumps(url.split('#')[0])}) && "
                      "document.readyState === 'complete'")

    def click(self, selector: str) -> None:
        self.wait_for(f"document.querySelector({json.dumps(selector)})")
        self.evaluate(f"document.querySelector({json.dumps(selector)}).click()")

    def fill(self, selector: str, value: str) -> None:
        self.wait_for(f"document.querySelector({json.dumps(selector)})")
        self.evaluate(f"document.querySelector({json.dumps(selector)}).value = {json.dumps(value)}")

    def text(self, selector: str) -> str:
        return str(self.evaluate(f"document.querySelector({json.dumps(selector)})?.textContent ?? ''"))


@contextmanager
def chromium(profile: Path) -> Iterator[Page]:
    """Headless chromium with a fresh profile in `profile`; yields its first page."""
    import websocket

    profile.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert proc.poll() is None, "chromium exited at start"
            assert time.monotonic() < deadline, "chromium did not open its DevTools port in 30 s"
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
            targets = json.loads(answer.read())
        target = next(t for t in targets if t["type"] == "page")
        socket = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        try:
            page = Page(socket)
            page.send("Page.enable")
            page.send("Runtime.enable")
            yield page
        finally:
            socket.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
