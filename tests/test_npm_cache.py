"""The npm-installed test tools give up quickly, saying why, when npm's registry cannot be reached
(issue 34.3: the suite sat over 5 minutes in npm's retries instead of skipping)."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import npm_cache

pytestmark = pytest.mark.skipif(shutil.which("npm") is None or shutil.which("node") is None,
                                reason="node and npm are not installed on this machine")
PACKAGE, ENTRY = "is-number@7.0.0", "node_modules/is-number/index.js"


@pytest.fixture(autouse=True)
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(npm_cache, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(npm_cache, "_probed", {})


@pytest.fixture
def silent_registry() -> Iterator[str]:
    """A registry address that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_refused_registry_is_reported_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{_closed_port()}/")
    started = time.monotonic()
    command, why = npm_cache.node_script(PACKAGE, ENTRY)
    assert command is None and why.startswith(npm_cache.UNREACHABLE), why
    assert time.monotonic() - started < 30
    assert not (npm_cache.CACHE / "is-number-7.0.0").exists()  # nothing half-installed is left


def test_a_registry_that_never_answers_is_given_up_on_within_the_probe_time(
        monkeypatch: pytest.MonkeyPatch, silent_registry: str) -> None:
    monkeypatch.setenv("npm_config_registry", silent_registry)
    monkeypatch.setattr(npm_cache, "PROBE_SECONDS", 3)
    started = time.monotonic()
    command, why = npm_cache.node_script(PACKAGE, ENTRY)
    took = time.monotonic() - started
    assert command is None and why.startswith(npm_cache.UNREACHABLE), why
    assert took < 3 + 5 + 2, took
    started = time.monotonic()  # asked once per package and run: the next caller is told at once
    assert npm_cache.node_script(PACKAGE, ENTRY) == (None, why) and time.monotonic() - started < 1
