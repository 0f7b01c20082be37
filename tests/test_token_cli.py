"""`agent-memory token issue|verify` and the signing secret."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from agent_memory.cli.main import main


def _issue(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["token", "issue", *args]) == 0
    return capsys.readouterr().out.strip()


def test_issue_creates_a_private_secret_file_and_verify_prints_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORY_AUTH_SECRET", raising=False)
    data = str(tmp_path / "data")
    token = _issue(capsys, "--agent-id", "bot-1", "--system-type", "sys3", "--team", "red",
                   "--skills", "memory_crud", "--ttl", "600", "--data-dir", data)
    secret_file = tmp_path / "data" / "auth_secret"
    assert stat.S_IMODE(os.stat(secret_file).st_mode) == 0o600
    first_secret = secret_file.read_text()
    assert main(["token", "verify", token, "--data-dir", data]) == 0
    claims = json.loads(capsys.readouterr().out)
    assert (claims["agent_id"], claims["system_type"], claims["team"], claims["skills"]) == (
        "bot-1", "sys3", "red", ["memory_crud"])
    assert claims["exp"] - claims["iat"] == 600
    _issue(capsys, "--agent-id", "bot-2", "--system-type", "sys1", "--team", "red", "--data-dir", data)
    assert secret_file.read_text() == first_secret


def test_environment_secret_wins_and_no_file_is_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_AUTH_SECRET", "a-long-enough-secret-value")
    token = _issue(capsys, "--agent-id", "a", "--system-type", "sys1", "--team", "t", "--data-dir", str(tmp_path))
    assert not (tmp_path / "auth_secret").exists()
    monkeypatch.setenv("MEMORY_AUTH_SECRET", "a-different-secret-value!!")
    assert main(["token", "verify", token, "--data-dir", str(tmp_path)]) == 1
    assert "bad signature" in capsys.readouterr().err


def test_short_environment_secret_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_AUTH_SECRET", "short")
    assert main(["token", "issue", "--agent-id", "a", "--system-type", "sys1", "--team", "t"]) == 2
    assert "auth_secret (MEMORY_AUTH_SECRET)" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "message"), [
    (["--agent-id", "bad id", "--system-type", "sys1", "--team", "t"], "agent_id"),
    (["--agent-id", "a", "--system-type", "sys6", "--team", "t"], "system_type"),
    (["--agent-id", "a", "--system-type", "sys1", "--team", "t", "--skills", "root"], "skills"),
    (["--agent-id", "a", "--system-type", "sys1", "--team", "t", "--ttl", "0"], "ttl"),
])
def test_issue_refuses_invalid_claims(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    monkeypatch.delenv("MEMORY_AUTH_SECRET", raising=False)
    assert main(["token", "issue", *args, "--data-dir", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_verify_reports_a_malformed_token(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_AUTH_SECRET", raising=False)
    assert main(["token", "verify", "garbage", "--data-dir", str(tmp_path)]) == 1
    assert "malformed token" in capsys.readouterr().err


def test_processes_starting_together_agree_on_one_secret(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from agent_memory.config import Settings
    from agent_memory.transports.auth import load_secret

    settings = Settings(data_dir=str(tmp_path / "fresh"))
    with ThreadPoolExecutor(8) as pool:
        secrets = set(pool.map(lambda _: load_secret(settings), range(16)))
    assert len(secrets) == 1
    assert [p.name for p in (tmp_path / "fresh").iterdir()] == ["auth_secret"]


def test_team_tokens_example_script_mints_verifiable_tokens(tmp_path: Path) -> None:
    import subprocess
    import sys

    from agent_memory.core.access.tokens import verify_token

    root = Path(__file__).resolve().parents[1]
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "TEAM": "platform",
           "MEMORY_AUTH_SECRET": "example-script-secret-0123456789", "HOME": str(tmp_path)}
    out = subprocess.run(["bash", str(root / "configs" / "team-tokens.example.sh")], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    rows = [line.split("\t") for line in out.strip().splitlines()]
    assert [agent for agent, _ in rows] == ["planner", "coder-1", "coder-2", "reviewer"]
    for agent, minted in rows:
        claims = verify_token(minted, b"example-script-secret-0123456789", now=0)
        assert claims.caller.agent_id == agent and claims.caller.team == "platform"


def _lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_issue_records_the_token_by_id_and_list_prints_its_claims_never_the_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORY_AUTH_SECRET", raising=False)
    data = str(tmp_path / "data")
    token = _issue(capsys, "--agent-id", "bot-1", "--system-type", "sys3", "--team", "red", "--skills",
                   "memory_crud", "--ttl", "600", "--data-dir", data)
    operator = _issue(capsys, "--operator", "--agent-id", "alice", "--data-dir", data)
    assert main(["token", "list", "--data-dir", data]) == 0
    out, err = capsys.readouterr()
    listed = _lines(out)
    assert [(t["agent_id"], t["team"], t["system_type"], t["skills"], t["operator"], t["kind"], t["revoked_at"])
            for t in listed] == [("bot-1", "red", "sys3", ["memory_crud"], False, "cli", None),
                                 ("alice", "operators", "sys4", ["memory_crud", "memory_reflect", "memory_retrieve"],
                                  True, "cli", None)]
    assert "2 tokens (2 valid, 0 revoked, 0 expired)" in err
    assert token not in out and token.split(".")[2] not in out and operator.split(".")[2] not in out
    assert main(["token", "verify", token, "--data-dir", data]) == 0
    assert json.loads(capsys.readouterr().out)["jti"] == listed[0]["id"]
    assert main(["token", "list", "--agent", "alice", "--data-dir", data]) == 0
    assert [t["agent_id"] for t in _lines(capsys.readouterr().out)] == ["alice"]


def test_revoke_by_id_makes_the_token_invalid_and_is_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORY_AUTH_SECRET", raising=False)
    data = str(tmp_path / "data")
    token = _issue(capsys, "--agent-id", "bot-1", "--system-type", "sys3", "--team", "red", "--data-dir", data)
    kept = _issue(capsys, "--agent-id", "bot-1", "--system-type", "sys3", "--team", "red", "--data-dir", data)
    assert main(["token", "verify", token, "--data-dir", data]) == 0
    token_id = json.loads(capsys.readouterr().out)["jti"]
    assert main(["token", "revoke", token_id, "--data-dir", data]) == 0
    revoked = json.loads(capsys.readouterr().out)
    assert revoked["id"] == token_id and revoked["revoked_at"]
    assert main(["token", "verify", token, "--data-dir", data]) == 1
    assert "invalid token: token revoked" in capsys.readouterr().err
    assert main(["token", "verify", kept, "--data-dir", data]) == 0
    capsys.readouterr()
    assert main(["audit", "--action", "token_revoke", "--data-dir", data]) == 0
    rows = _lines(capsys.readouterr().out)
    assert [(r["tool"], r["details"]["token_id"]) for r in rows] == [("token", token_id)]


def test_revoke_agent_covers_its_unrecorded_and_id_less_tokens_but_not_later_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from agent_memory.core.access.tokens import issue_token
    from agent_memory.core.model.models import Caller, SystemType
    from tests.core.test_token_revocation import signed_claims

    secret = "revoke-agent-secret-0123456789"
    monkeypatch.setenv("MEMORY_AUTH_SECRET", secret)
    data = str(tmp_path / "data")
    now = int(time.time())
    recorded = _issue(capsys, "--agent-id", "bot-1", "--system-type", "sys1", "--team", "red", "--data-dir", data)
    unrecorded = issue_token(Caller("bot-1", SystemType.SYS1, "red"), secret.encode(), now=now, ttl_seconds=600)
    id_less = signed_claims({"agent_id": "bot-1", "system_type": "sys1", "team": "red", "skills": [], "iat": now,
                       "exp": now + 600}, secret.encode())
    other = _issue(capsys, "--agent-id", "bot-2", "--system-type", "sys1", "--team", "red", "--data-dir", data)
    assert main(["token", "revoke", "--agent", "bot-1", "--data-dir", data]) == 0
    assert "1 recorded tokens newly marked" in capsys.readouterr().err
    for gone in (recorded, unrecorded, id_less):
        assert main(["token", "verify", gone, "--data-dir", data]) == 1
        assert "token revoked" in capsys.readouterr().err
    later = _issue(capsys, "--agent-id", "bot-1", "--system-type", "sys1", "--team", "red", "--data-dir", data)
    for valid in (later, other):
        assert main(["token", "verify", valid, "--data-dir", data]) == 0
    capsys.readouterr()
    assert main(["token", "list", "--data-dir", data]) == 0
    out, err = capsys.readouterr()
    assert [bool(t["revoked_at"]) for t in _lines(out)] == [True, False, False]
    assert "every token of bot-1 issued through" in err


@pytest.mark.parametrize(("args", "code", "message"), [
    (["tok_01ARZ3NDEKTSV4RRFFQ69G5FAV"], 1, "no token tok_01ARZ3NDEKTSV4RRFFQ69G5FAV is recorded"),
    ([], 2, "a token id"),
    (["tok_01ARZ3NDEKTSV4RRFFQ69G5FAV", "--agent", "bot-1"], 2, "not both"),
    (["--agent", "bad id"], 2, "not an agent id"),
])
def test_revoke_refuses_what_names_no_recorded_token(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch, args: list[str], code: int,
                                                     message: str) -> None:
    monkeypatch.delenv("MEMORY_AUTH_SECRET", raising=False)
    assert main(["token", "revoke", *args, "--data-dir", str(tmp_path)]) == code
    assert message in capsys.readouterr().err
