"""Node packages the tests and benchmarks run (the MCP Inspector, the reference memory server),
npm-installed once into a cache directory: AGENT_MEMORY_TEST_CACHE, default
~/.cache/agent-memory-tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

CACHE = Path(os.environ.get("AGENT_MEMORY_TEST_CACHE", Path.home() / ".cache" / "agent-memory-tests"))


def node_script(package: str, entry: str) -> tuple[list[str] | None, str]:
    """`[node, script]` for `entry` (a path inside the install, e.g. `node_modules/x/dist/index.js`)
    of `package` (`name@version`), installing it on first use; or None and why not."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return None, "node and npm are not installed on this machine"
    name, version = package.rsplit("@", 1)
    home = CACHE / f"{name.rsplit('/', 1)[-1]}-{version}"
    script = home / entry
    if not script.exists():
        home.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run([npm, "install", "--prefix", str(home), "--no-audit", "--no-fund",
                                   "--loglevel=error", package], capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return None, f"npm install {package} took over 300 s (registry unreachable?)"
        if done.returncode != 0 or not script.exists():
            why = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
            return None, f"npm could not install {package}: {why}"
    return [node, str(script)], ""
