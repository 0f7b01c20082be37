"""Benchmarks run from a clone or say what they need; docs/benchmarks.md lists them, and no page of
the documentation points at an issue tracker a user cannot see or at paths of the machine it was
written on."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "tests" / "bench"
BENCHMARKS = (ROOT / "docs" / "benchmarks.md").read_text()
PAGES = {p.relative_to(ROOT).as_posix(): p.read_text() for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]}
NEEDS_LOCOMO = ["bench_locomo.py", "bench_retrieve.py", "bench_reflect.py", "bench_selective.py", "bench_pg_keyword.py",
                "bench_hooks.py", "bench_sidebyside.py"]


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


def test_the_benchmarks_page_lists_every_bench_and_says_which_need_data() -> None:
    for script in sorted(p.name for p in BENCH.glob("bench_*.py") if p.name != "bench_server.py"):
        lines = [line for line in BENCHMARKS.splitlines() if f"tests/bench/{script}" in line]
        assert lines, f"docs/benchmarks.md does not say how to run {script}"
        assert ("--data DIR" in lines[0]) == (script in NEEDS_LOCOMO), lines[0]


@pytest.mark.parametrize("page", sorted(PAGES))
def test_no_page_points_at_an_issue_tracker_or_this_machine_or_calls_anything_unfinished(page: str) -> None:
    text = PAGES[page]
    for phrase in ("issue notes", "the issues", "being built", "open work", "agent-memory-mcp", "../shared",
                   "these 2-core", "these machines", "vsm-agent-memory["):
        assert phrase not in text.lower(), phrase
    assert not re.search(r"\bissue #?\d+", text, re.IGNORECASE)
