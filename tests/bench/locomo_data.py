"""Where the benchmarks that replay LoCoMo find it, and what they say when it is missing.

The data set is not in this repository (its license, CC BY-NC 4.0, is not ours to relicense):
`--data DIR` or `AGENT_MEMORY_LOCOMO=DIR` names a folder with one sub-folder per conversation,
each holding `memories.jsonl` (one dialogue turn a line: conv, dia_id, speaker, session,
session_date_iso, text) and `queries.jsonl` (question, answer, evidence dia_ids), converted from
`data/locomo10.json` of github.com/snap-research/LoCoMo. Default: ../shared/data/locomo/dev
beside the clone.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENV = "AGENT_MEMORY_LOCOMO"
DEFAULT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo" / "dev"
EXIT_MISSING = 2


def locomo_dir(given: Path | None = None) -> Path:
    """The LoCoMo folder from `--data`, else $AGENT_MEMORY_LOCOMO, else the default; exits with
    status 2 and says what is needed when it holds no conversation."""
    path = given or (Path(os.environ[ENV]) if os.environ.get(ENV) else DEFAULT)
    folders = [p for p in path.iterdir() if (p / "memories.jsonl").is_file()] if path.is_dir() else []
    if not folders or not all((p / "queries.jsonl").is_file() for p in folders):
        script = Path(sys.argv[0]).name
        print(f"{script}: needs the LoCoMo dev set, which is not in this repository; looked in {path}.\n"
              "Pass --data DIR or set AGENT_MEMORY_LOCOMO=DIR: a folder with one sub-folder per conversation, each "
              "holding memories.jsonl (a dialogue turn a line) and queries.jsonl (questions with evidence ids), "
              "converted from data/locomo10.json of github.com/snap-research/LoCoMo (CC BY-NC 4.0); "
              "tests/bench/locomo_data.py describes the fields.", file=sys.stderr)
        sys.exit(EXIT_MISSING)
    return path
