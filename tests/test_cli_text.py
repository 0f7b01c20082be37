"""The text rule on the command line: an argument that is not valid UTF-8 (it reaches Python as a
lone surrogate) is refused in one line naming the flag, exit 2, no traceback; file names keep
whatever bytes the OS allows."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.servers import agent_memory_command, server_env

BAD = b"a\xff"


@pytest.mark.parametrize(("args", "flag"), [
    ([b"export", b"--namespace", BAD], "--namespace"),
    ([b"erase", b"--scope", b"agent", b"--namespace", BAD, b"--dry-run"], "--namespace"),
    ([b"audit", b"--agent", BAD], "--agent"),
    ([b"audit", b"--action", BAD], "--action"),
    ([b"audit", b"--outcome", BAD], "--outcome"),
])
def test_an_argument_that_is_not_utf8_is_refused_naming_the_flag(tmp_path: Path, args: list[bytes],
                                                                 flag: str) -> None:
    done = subprocess.run([agent_memory_command().encode(), *args], capture_output=True,
                          env=server_env(tmp_path / "data"), timeout=60)
    assert done.returncode == 2
    assert done.stderr.decode() == (f"agent-memory: {flag} holds a lone surrogate (U+D800..U+DFFF): text must be "
                                    "valid Unicode\n")
    assert done.stdout == b""


def test_a_file_name_that_is_not_utf8_is_still_a_file_name(tmp_path: Path) -> None:
    out = bytes(tmp_path) + b"/export-\xff.jsonl"
    done = subprocess.run([agent_memory_command().encode(), b"export", b"--output", out], capture_output=True,
                          env=server_env(tmp_path / "data"), timeout=60)
    assert done.returncode == 0, done.stderr
    assert Path(out.decode("utf-8", "surrogateescape")).exists()
