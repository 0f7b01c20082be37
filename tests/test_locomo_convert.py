"""tests/bench/locomo_data.py's conversion of LoCoMo's locomo10.json into the benchmarks' folder:
every rule on a small conversation shaped like the real file (the real file, converted, is
byte-identical to the development set the documented figures were measured on)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "bench"))
from locomo_data import convert  # noqa: E402


def _turn(speaker: str, dia_id: str, text: str, **extra: str) -> dict:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


SAMPLE = {
    "sample_id": "conv-26",
    "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Melanie",
        "session_10_date_time": "8:05 am on 2 January, 2024",
        "session_10": [_turn("Melanie", "D10:1", "Happy new year!")],
        "session_2_date_time": "1:56 pm on 8 May, 2023",
        "session_2": [_turn("Caroline", "D2:1", "I went to a support group."),
                      _turn("Melanie", "D2:2", "Look at this.", blip_caption="a photo of a sunset", img_url="x")],
    },
    "qa": [
        {"question": "When did Caroline go?", "answer": "7 May 2023", "evidence": ["D2:1"], "category": 2},
        {"question": "Adversarial?", "adversarial_answer": "no", "evidence": ["D2:1"], "category": 5},
        {"question": "Nothing cited?", "answer": "yes", "evidence": [], "category": 3},
        {"question": "What year?", "answer": 2023, "evidence": ["D2:2; D10:1", "D:2:1", "D2:2"], "category": 1},
        {"question": "Only a stray id?", "answer": "?", "evidence": ["D", "D9:9"], "category": 4},
    ],
}


def test_turns_become_memories_in_session_order_with_speaker_date_and_caption() -> None:
    memories, _ = convert(SAMPLE)
    assert [m["dia_id"] for m in memories] == ["D2:1", "D2:2", "D10:1"]  # session 2 before 10
    assert memories[0] == {"conv": "conv-26", "dia_id": "D2:1", "speaker": "Caroline", "session": 2,
                           "session_date": "1:56 pm on 8 May, 2023", "session_date_iso": "2023-05-08T13:56",
                           "text": "Caroline: I went to a support group."}
    assert memories[1]["image_caption"] == "a photo of a sunset" and "img_url" not in memories[1]
    assert memories[2]["session_date_iso"] == "2024-01-02T08:05"


def test_questions_keep_their_place_number_and_only_real_cited_turns() -> None:
    _, queries = convert(SAMPLE)
    assert [q["qid"] for q in queries] == ["conv-26:q000", "conv-26:q003"]  # adversarial, uncited, stray: out
    assert queries[1] == {"conv": "conv-26", "qid": "conv-26:q003", "question": "What year?", "answer": "2023",
                          "evidence": ["D2:2", "D10:1", "D2:1"], "category": 1}


def test_the_script_writes_the_development_conversations_and_warns_about_another_file(tmp_path: Path) -> None:
    source = tmp_path / "locomo10.json"
    source.write_text(json.dumps([SAMPLE, {**SAMPLE, "sample_id": "conv-44"}]))
    ran = subprocess.run([sys.executable, str(ROOT / "tests" / "bench" / "locomo_data.py"), str(source),
                          str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert "is not the locomo10.json" in ran.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["conv-26"]  # conv-44 is not in dev
    lines = (tmp_path / "out" / "conv-26" / "queries.jsonl").read_text().splitlines()
    assert [json.loads(line)["qid"] for line in lines] == ["conv-26:q000", "conv-26:q003"]
    every = subprocess.run([sys.executable, str(ROOT / "tests" / "bench" / "locomo_data.py"), str(source),
                            str(tmp_path / "all"), "--all"], capture_output=True, text=True, timeout=60)
    assert every.returncode == 0 and sorted(p.name for p in (tmp_path / "all").iterdir()) == ["conv-26", "conv-44"]
