"""Identity refusals name the field, the accepted values and the likely intent, and never echo
long or odd text."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from agent_memory.core.access.identity import parse_identity, parse_system_type
from agent_memory.core.access.tokens import TokenError, verify_token
from agent_memory.core.model.errors import Forbidden

SECRET = b"s" * 32


@pytest.mark.parametrize(("given", "guess"), [
    ("3", "sys3"), (3, "sys3"), ("SYS4", "sys4"), ("Sys 2", "sys2"), ("system5", "sys5"), ("S1", "sys1"),
    ("sys_3", "sys3"), ("sys9", None), ("admin", None), (True, None), (None, None),
])
def test_system_type_refusal_lists_the_values_and_suggests_the_likely_one(given: object, guess: str | None) -> None:
    with pytest.raises(Forbidden) as raised:
        parse_system_type(given)
    message = raised.value.message
    assert "system_type must be one of sys1, sys2, sys3, sys4, sys5" in message
    assert raised.value.details["allowed"] == ["sys1", "sys2", "sys3", "sys4", "sys5"]
    assert (f"did you mean '{guess}'?" in message) if guess else ("did you mean" not in message)


@pytest.mark.parametrize(("value", "shown"), [
    ("x y" * 30, "a 90-character string"), ('a"b', "a 3-character string"), ("", "an empty string"),
    (["sys1"], "an array"), ({"a": 1}, "an object"), (1.5, "a number"),
])
def test_rejected_values_are_shown_only_when_short_and_plain(value: object, shown: str) -> None:
    with pytest.raises(Forbidden) as raised:
        parse_identity({"agent_id": value, "system_type": "sys1", "team": "red"}, default_skills=frozenset())
    assert raised.value.message.endswith(f"got {shown}") and raised.value.details["field"] == "agent_id"


def test_missing_fields_are_all_named() -> None:
    with pytest.raises(Forbidden) as raised:
        parse_identity({"agent_id": "a"}, default_skills=frozenset())
    assert raised.value.details == {"field": "system_type", "missing": ["system_type", "team"]}
    assert "system_type is required (missing: system_type, team)" in raised.value.message


def test_a_signed_token_with_invalid_claims_says_what_is_wrong() -> None:
    claims = {"agent_id": "a", "system_type": "3", "team": "red", "skills": [], "iat": 0, "exp": 100}
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    signature = hmac.new(SECRET, f"am1.{payload}".encode(), hashlib.sha256).digest()
    token = f"am1.{payload}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"
    with pytest.raises(TokenError) as raised:
        verify_token(token, SECRET, now=1)
    assert "system_type must be one of sys1" in str(raised.value) and "agent-memory token issue" in str(raised.value)
