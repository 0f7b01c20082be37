"""Benchmarks run from a clone or say what they need; the README lists them and points at no issue
tracker a user cannot see."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "tests" / "bench"
README = (ROOT / "README.md").read_text()
NEEDS_LOCOMO = ["bench_locomo.py", "bench_retrieve.py", "bench_reflect.py", "bench_selective.py", "bench_pg_keyword.py",
                "bench_hooks.py"]


@pytest.mark.parametrize("script", NEEDS_LOCOMO)
def test_a_bench_without_its_data_says_what_it_needs_and_exits_2(script: str, tmp_path: Path) -> None:
    env = {**os.environ, "AGENT_MEMORY_LOCOMO": str(tmp_path / "not-here")}
    ran = subprocess.run([sys.executable, str(BENCH / script)], env=env, cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert ran.returncode == 2, ran.stderr
    assert "Traceback" not in ran.stderr
    assert f"{script}: needs the LoCoMo dev set" in ran.stderr and str(tmp_path / "not-here") in ran.stderr
    assert "--data DIR" in ran.stderr and "AGENT_MEMORY_LOCOMO=DIR" in ran.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    given = subprocess.run([sys.executable, str(BENCH / script), "--data", str(empty)], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert given.returncode == 2 and f"looked in {empty}." in given.stderr


def test_the_readme_lists_every_bench_and_says_which_need_data() -> None:
    development = README.split("## Development", 1)[1]
    for script in sorted(p.name for p in BENCH.glob("bench_*.py") if p.name != "bench_server.py"):
        lines = [line for line in development.splitlines() if f"tests/bench/{script}" in line]
        assert lines, f"README does not say how to run {script}"
        assert ("--data DIR" in lines[0]) == (script in NEEDS_LOCOMO), lines[0]


def test_the_readme_points_at_no_issue_tracker_and_calls_nothing_unfinished() -> None:
    for phrase in ("issue notes", "the issues", "being built", "open work", "agent-memory-mcp"):
        assert phrase not in README.lower(), phrase
    assert not re.search(r"\bissue #?\d+", README, re.IGNORECASE)
