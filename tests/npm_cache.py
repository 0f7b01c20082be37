"""Node packages the tests and benchmarks run (the MCP Inspector, the Claude Code CLI, the
reference memory server), npm-installed once into a cache directory: AGENT_MEMORY_TEST_CACHE,
default ~/.cache/agent-memory-tests.

Before a first install the registry is asked for the package's version with no retries and a short
timeout, so a machine that has npm but cannot reach its registry gives up within
`PROBE_SECONDS` with a reason starting with `UNREACHABLE` (tests skip on it) instead of sitting in
npm's retries (about 70 s a package)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

CACHE = Path(os.environ.get("AGENT_MEMORY_TEST_CACHE", Path.home() / ".cache" / "agent-memory-tests"))
PROBE_SECONDS = 20  # the registry's answer to one metadata request, at most
INSTALL_SECONDS = 300
UNREACHABLE = "the npm registry is unreachable"
_probed: dict[str, str] = {}  # package -> why the registry could not give it ("" when it could)


def _probe(npm: str, package: str) -> str:
    """'' when the registry answers for `package`, else why not (starting with UNREACHABLE)."""
    if package not in _probed:
        command = [npm, "view", package, "version", "--fetch-retries=0", f"--fetch-timeout={PROBE_SECONDS * 1000}"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_SECONDS + 5,
                                  stdin=subprocess.DEVNULL)
            failed = done.returncode != 0 or not done.stdout.strip()
            detail = (done.stderr.strip().splitlines() or ["no answer"])[-1][:200]
        except subprocess.TimeoutExpired:
            failed, detail = True, f"no answer within {PROBE_SECONDS + 5} s"
        _probed[package] = f"{UNREACHABLE} (npm view {package}: {detail})" if failed else ""
    return _probed[package]


def node_script(package: str, entry: str) -> tuple[list[str] | None, str]:
    """`[node, script]` for `entry` (a path inside the install, e.g. `node_modules/x/dist/index.js`)
    of `package` (`name@version`), installing it on first use; or None and why not."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return None, "node and npm are not installed on this machine"
    name, version = package.rsplit("@", 1)
    home = CACHE / f"{name.rsplit('/', 1)[-1]}-{version}"
    script = home / entry
    if script.exists():
        return [node, str(script)], ""
    if why := _probe(npm, package):
        return None, why
    home.mkdir(parents=True, exist_ok=True)
    with open(home.with_name(home.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install at a time (tests run in parallel processes)
        if not script.exists():
            try:
                done = subprocess.run([npm, "install", "--prefix", str(home), "--no-audit", "--no-fund",
                                       "--loglevel=error", "--fetch-retries=1", package], capture_output=True,
                                      text=True, timeout=INSTALL_SECONDS, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                return None, f"npm install {package} took over {INSTALL_SECONDS} s"
            if done.returncode != 0 or not script.exists():
                why = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
                return None, f"npm could not install {package}: {why}"
    return [node, str(script)], ""
