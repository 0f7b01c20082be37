"""Where the benchmarks that replay LoCoMo find it, and what they say when it is missing.

The data set is not in this repository (its license, CC BY-NC 4.0, is not ours to relicense):
`--data DIR` or `AGENT_MEMORY_LOCOMO=DIR` names a folder with one sub-folder per conversation,
each holding `memories.jsonl` (one dialogue turn a line: conv, dia_id, speaker, session,
session_date_iso, text) and `queries.jsonl` (question, answer, evidence dia_ids), converted from
`data/locomo10.json` of github.com/snap-research/LoCoMo. Default: ../shared/data/locomo/dev
beside the clone.

Run as a script, it makes that folder from LoCoMo's file (`convert`): `python
tests/bench/locomo_data.py locomo10.json DIR` writes the five development conversations the
figures in docs/benchmarks.md were measured on (`--all`: all ten).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from datetime import datetime
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
              "made from data/locomo10.json of github.com/snap-research/LoCoMo (CC BY-NC 4.0) by "
              "`python tests/bench/locomo_data.py locomo10.json DIR`.", file=sys.stderr)
        sys.exit(EXIT_MISSING)
    return path


# The conversion from LoCoMo's own file: `python tests/bench/locomo_data.py locomo10.json DIR`.
SOURCE_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"  # data/locomo10.json at 3eb6f2c
DEV = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43")
SKIPPED_CATEGORY = 5  # adversarial: the answer is not in the conversation


def _when(text: str) -> str:
    """A session's date as LoCoMo writes it ("1:56 pm on 8 May, 2023") in ISO form, to the minute."""
    return datetime.strptime(text, "%I:%M %p on %d %B, %Y").strftime("%Y-%m-%dT%H:%M")


def _evidence(raw: list[str], known: set[str]) -> list[str]:
    """The turn ids a question cites, as `D<session>:<turn>`: LoCoMo sometimes puts several in one
    string ("D8:6; D9:17", "D9:1 D4:4"), writes one as "D:11:26", or names no turn ("D"); ids
    of no turn of the conversation are left out, and each id is kept once."""
    found = []
    for text in raw:
        for part in re.split(r"[;\s]+", text):
            if match := re.fullmatch(r"D:?(\d+):(\d+)", part):
                found.append(f"D{int(match[1])}:{int(match[2])}")
    return [i for i in dict.fromkeys(found) if i in known]


def convert(sample: dict) -> tuple[list[dict], list[dict]]:
    """One conversation of locomo10.json as (memories, queries): a memory per turn (its text
    behind its speaker's name, the shared image's caption where there was one); the questions
    with at least one cited turn, adversarial ones left out, numbered by their place in the file."""
    conv, talk = sample["sample_id"], sample["conversation"]
    memories = []
    for n in sorted(int(key.split("_")[1]) for key in talk if re.fullmatch(r"session_\d+", key)):
        date = talk[f"session_{n}_date_time"]
        for turn in talk[f"session_{n}"]:
            memory = {"conv": conv, "dia_id": turn["dia_id"], "speaker": turn["speaker"], "session": n,
                      "session_date": date, "session_date_iso": _when(date),
                      "text": f"{turn['speaker']}: {turn['text']}"}
            if turn.get("blip_caption"):
                memory["image_caption"] = turn["blip_caption"]
            memories.append(memory)
    known = {m["dia_id"] for m in memories}
    queries = []
    for number, qa in enumerate(sample["qa"]):
        evidence = _evidence(qa.get("evidence", []), known)
        if qa.get("category") == SKIPPED_CATEGORY or not evidence:
            continue
        queries.append({"conv": conv, "qid": f"{conv}:q{number:03d}", "question": qa["question"],
                        "answer": str(qa["answer"]), "evidence": evidence, "category": qa["category"]})
    return memories, queries


def write_folder(source: Path, out: Path, conversations: tuple[str, ...] | None = DEV) -> list[str]:
    """Convert `source` (locomo10.json) into `out/<conv>/memories.jsonl` and `queries.jsonl` for
    `conversations` (None: all ten); returns the names written."""
    written = []
    for sample in json.loads(source.read_text()):
        if conversations is not None and sample["sample_id"] not in conversations:
            continue
        memories, queries = convert(sample)
        folder = out / sample["sample_id"]
        folder.mkdir(parents=True, exist_ok=True)
        for name, rows in (("memories.jsonl", memories), ("queries.jsonl", queries)):
            (folder / name).write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
        written.append(sample["sample_id"])
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description="Convert LoCoMo's data/locomo10.json into the folder the "
                                                 "benchmarks read (--data DIR).")
    parser.add_argument("source", type=Path, help="data/locomo10.json of github.com/snap-research/LoCoMo")
    parser.add_argument("out", type=Path, help="the folder to write (one sub-folder per conversation)")
    parser.add_argument("--all", action="store_true", help="all ten conversations (default: the five of the "
                                                           "development set, " + ", ".join(DEV) + ")")
    args = parser.parse_args()
    if hashlib.sha256(args.source.read_bytes()).hexdigest() != SOURCE_SHA256:
        print(f"warning: {args.source} is not the locomo10.json these figures were measured on "
              f"(sha256 {SOURCE_SHA256})", file=sys.stderr)
    written = write_folder(args.source, args.out, None if args.all else DEV)
    print(f"wrote {len(written)} conversations to {args.out}: {', '.join(written)}")


if __name__ == "__main__":
    main()
