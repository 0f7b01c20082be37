"""What a real third-party host shows for an invalid identity: the MCP Inspector's CLI, sending
the identity as request metadata, prints the server's explanation for tools/list and exits
non-zero (an empty tool list would have looked like a working server).

Skipped, with the reason printed, where node/npm or the npm registry are unavailable."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.servers import agent_memory_command
from tests.e2e.test_inspector import inspector  # noqa: F401 - the fixture

BAD = json.dumps({"agent_id": "a", "system_type": "3", "team": "red"})


def test_inspector_shows_the_identity_error_on_tools_list(inspector: list[str], tmp_path: Path) -> None:  # noqa: F811
    base = [*inspector, "-e", f"MEMORY_DATA_DIR={tmp_path / 'data'}", "-e", "MEMORY_VECTOR_BACKEND=none",
            agent_memory_command(), "serve", "--metadata", f"agent-memory/identity={BAD}"]
    done = subprocess.run([*base, "--method", "tools/list"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0, done.stdout
    shown = done.stdout + done.stderr
    for text in ("system_type must be one of sys1, sys2, sys3, sys4, sys5", "got '3'", "did you mean 'sys3'?",
                 "Choosing a system type and team"):
        assert text in shown, shown[-2000:]
