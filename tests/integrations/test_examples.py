"""The examples in examples/ run as a user would run them, against a real server."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.e2e.servers import server_env

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, data_dir: Path) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / name), "--data-dir", str(data_dir)], capture_output=True,
                          text=True, timeout=120, env=server_env(data_dir))
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_autogen_example_injects_the_relevant_memories(tmp_path: Path) -> None:
    out = run_example("autogen_memory.py", tmp_path / "data")
    assert out.splitlines()[1].endswith("The traveller is vegetarian.")
    assert "SystemMessage: '\\nRelevant memory content:\\n<recalled-memory note=" in out
    assert "\\n- [agent/long_term mem_" in out and " by travel-planner in travel-planner] " in out


def test_langgraph_example_recalls_by_meaning_inside_a_graph(tmp_path: Path) -> None:
    out = run_example("langgraph_store.py", tmp_path / "data")
    last_question = [line for line in out.splitlines() if line.startswith("'Which operating system")]
    assert len(last_question) == 1
    recalled = ast.literal_eval(last_question[0].split(" -> ")[1])
    assert recalled[0].endswith(" my laptop is a ThinkPad X1 running Fedora")  # best match first
    assert out.splitlines()[-1] == "namespaces: [('memories', 'dana')]"
