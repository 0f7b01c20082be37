"""Operator tokens (`token issue --operator`), the console's browse areas, and `agent-memory console` on a
busy port (its sign-in: tests/e2e/test_console_sign_in.py)."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from pathlib import Path

import pytest

from agent_memory.cli.main import main
from agent_memory.core.access import permissions
from agent_memory.core.access.tokens import TokenError, issue_token, verify_token
from agent_memory.core.access.visibility import Area, readable_areas
from agent_memory.core.memories.browse import narrowed
from agent_memory.core.model.models import Access, Caller, Scope, SystemType
from tests.e2e.servers import agent_memory_command, server_env

SECRET = b"operator-test-secret-0123456789"


def test_issue_operator_prints_an_operator_token_and_defaults_its_identity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORY_AUTH_SECRET", raising=False)
    data = str(tmp_path / "data")
    assert main(["token", "issue", "--operator", "--agent-id", "alice", "--data-dir", data]) == 0
    token = capsys.readouterr().out.strip()
    assert main(["token", "verify", token, "--data-dir", data]) == 0
    claims = json.loads(capsys.readouterr().out)
    assert (claims["agent_id"], claims["system_type"], claims["team"], claims["op"]) == (
        "alice", "sys4", "operators", True)


def test_issue_without_team_needs_operator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["token", "issue", "--agent-id", "bob", "--system-type", "sys1", "--data-dir", str(tmp_path)]) == 2
    assert "--team" in capsys.readouterr().err


def test_operator_claim_round_trips_and_an_ordinary_token_has_none() -> None:
    now = int(time.time())
    op = Caller("root", SystemType.SYS1, "ops", operator=True)
    assert verify_token(issue_token(op, SECRET, now=now, ttl_seconds=60), SECRET, now=now).caller.operator
    plain = Caller("root", SystemType.SYS1, "ops")
    assert not verify_token(issue_token(plain, SECRET, now=now, ttl_seconds=60), SECRET, now=now).caller.operator


def test_an_op_claim_that_is_not_a_boolean_is_malformed() -> None:
    import hashlib
    import hmac

    payload = base64.urlsafe_b64encode(json.dumps(
        {"agent_id": "a", "system_type": "sys1", "team": "t", "skills": [], "iat": 1, "exp": 2**40, "op": "yes"},
        separators=(",", ":"), sort_keys=True).encode()).rstrip(b"=").decode()
    signature = hmac.new(SECRET, f"am1.{payload}".encode(), hashlib.sha256).digest()
    token = f"am1.{payload}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"
    with pytest.raises(TokenError, match="malformed token claims"):
        verify_token(token, SECRET, now=10)


def test_an_operator_passes_the_gate_everywhere_and_reads_every_scope() -> None:
    op = Caller("root", SystemType.SYS1, "ops", operator=True)
    assert permissions.is_allowed(op, Access.WRITE, Scope.TEAM, "blue", owner_agent_id=None)
    assert permissions.is_allowed(op, Access.READ, Scope.AGENT, "someone-else", owner_agent_id="someone-else",
                                  entry_team="blue")
    assert readable_areas(op) == (Area(Scope.AGENT), Area(Scope.TEAM), Area(Scope.GLOBAL))
    assert readable_areas(Caller("root", SystemType.SYS1, "ops")) != readable_areas(op)


def test_browse_narrows_readable_areas_to_a_namespace_subtree() -> None:
    red = Caller("r1", SystemType.SYS3, "red")
    areas = readable_areas(red)
    assert narrowed(areas, "red/ops") == (Area(Scope.TEAM, "red/ops", subtree=True, reader="r1"),)  # read lists too
    assert narrowed(areas, "blue") == ()
    assert narrowed(areas, "r1") == (Area(Scope.AGENT, "r1", subtree=True, owner="r1", team="red"),)
    assert narrowed(areas, None) == areas
    assert narrowed(readable_areas(Caller("op", SystemType.SYS1, "x", operator=True)), "blue")[1] == Area(
        Scope.TEAM, "blue", subtree=True)


def test_console_command_on_a_busy_port_exits_3_before_printing_a_url(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([agent_memory_command(), "console", "--port", str(port)],
                              env=server_env(tmp_path / "data"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and "already in use" in done.stderr and "/console/" not in done.stdout
