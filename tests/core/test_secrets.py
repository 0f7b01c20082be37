"""Secret redaction (core.memories.secrets) on the labelled corpus, and its rules one by one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_memory.core.memories.secrets import Redactor, find_secrets, redact, secret_name

CORPUS = [json.loads(line) for line in
          (Path(__file__).parents[1] / "fixtures" / "secrets_corpus.jsonl").read_text().splitlines() if line]


def test_the_corpus_is_big_enough_and_labelled() -> None:
    secrets = [r for r in CORPUS if r["label"] == "secret"]
    benign = [r for r in CORPUS if r["label"] == "benign"]
    assert len(secrets) >= 60 and len(benign) >= 60
    assert all(r["secrets"] and all(s in r["text"] for s in r["secrets"]) for r in secrets)
    assert all(not r["secrets"] for r in benign)


def test_recall_and_false_redactions_on_the_corpus() -> None:
    values = caught = false = 0
    for record in CORPUS:
        text, found = record["text"], find_secrets(record["text"])
        redacted, count = redact(text)
        assert count == len(found)
        spans = [(text.find(s), text.find(s) + len(s)) for s in record["secrets"]]
        false += sum(not any(f.start < e and s < f.end for s, e in spans) for f in found)
        values += len(record["secrets"])
        caught += sum(s not in redacted for s in record["secrets"])
    assert caught / values >= 0.95, f"recall {caught / values:.3f}"
    assert false <= 2, f"{false} false redactions"


def test_a_redaction_keeps_the_text_around_it_readable() -> None:
    text = "DATABASE_URL=postgres://app:Zx7!kQ2pWm@db.prod.internal:5432/orders and key AKIAQWERTYUIOPASDFG2"
    assert redact(text) == ("DATABASE_URL=postgres://app:[REDACTED:password]@db.prod.internal:5432/orders and key "
                            "[REDACTED:aws_access_key]", 2)
    assert redact('password: "v9#Lq2!mZp"') == ('password: "[REDACTED:password]"', 1)


@pytest.mark.parametrize(("name", "says_secret"), [
    ("DB_PASSWORD", True), ("SecretAccessKey", True), ("x-api-key", True), ("client_secret", True),
    ("PGPASSWORD", True), ("spring.datasource.password", True), ("_authToken", True),
    ("password_min_length", False), ("max_tokens", False), ("api_key_header", False), ("bypass", False),
    ("token_type", False), ("key", False),
])
def test_names_that_say_secret(name: str, says_secret: bool) -> None:
    assert secret_name(name) is says_secret


def test_switched_off_nothing_changes_and_a_text_within_a_limit_stays_within_it() -> None:
    text = "token: ghp_" + "a1" * 18
    assert Redactor(enabled=False).text(text) == (text, 0)
    clean, found = Redactor().text("PASS=Ab1!x", limit=12)  # the marker is longer than the secret
    assert (clean, found) == ("PASS=[REDACT", 1)
