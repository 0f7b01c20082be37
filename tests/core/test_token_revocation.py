"""Token ids (`jti`) and the revocation rule (`core/access/revocation.py`), without a store."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from agent_memory.core.access.revocation import is_revoked, token_record
from agent_memory.core.access.tokens import TokenError, issue_token, mint, token_id_ms, verify_token
from agent_memory.core.model.models import Caller, Skill, SystemType
from agent_memory.core.ports import TokenStanding

SECRET = b"s" * 32
CALLER = Caller("alice", SystemType.SYS3, "red", frozenset({Skill.CRUD}))
NOW_MS = 1_800_000_000_123


def signed_claims(claims: dict[str, object], secret: bytes = SECRET) -> str:
    """A token with exactly these claims, signed with `secret` (as an older server minted them)."""
    payload = base64.urlsafe_b64encode(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    payload_text = payload.rstrip(b"=").decode()
    signature = hmac.new(secret, f"am1.{payload_text}".encode(), hashlib.sha256).digest()
    return f"am1.{payload_text}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


LEGACY = {"agent_id": "alice", "system_type": "sys3", "team": "red", "skills": ["memory_crud"], "iat": 1_800_000_000,
          "exp": 1_800_003_600}


def test_a_minted_token_carries_an_id_that_says_the_millisecond_it_was_minted() -> None:
    token, claims = mint(CALLER, SECRET, now_ms=NOW_MS, ttl_seconds=60)
    verified = verify_token(token, SECRET, now=NOW_MS // 1000)
    assert verified == claims and verified.token_id is not None and verified.token_id.startswith("tok_")
    assert token_id_ms(verified.token_id) == NOW_MS == verified.issued_ms
    assert verified.as_dict()["jti"] == verified.token_id
    assert mint(CALLER, SECRET, now_ms=NOW_MS, ttl_seconds=60)[1].token_id != verified.token_id


def test_a_token_minted_before_ids_existed_still_verifies_and_counts_as_minted_at_the_start_of_its_second() -> None:
    claims = verify_token(signed_claims(LEGACY), SECRET, now=1_800_000_001)
    assert claims.caller == CALLER and claims.token_id is None and "jti" not in claims.as_dict()
    assert claims.issued_ms == 1_800_000_000_000


@pytest.mark.parametrize("jti", ["", "tok_short", 7, None, "tok_01ARZ3NDEKTSV4RRFFQ69G5FAVX",
                                 "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV", "tok_01ARZ3NDEKTSV4RRFFQ69G5FAU"])
def test_a_signed_token_whose_id_is_not_a_token_id_is_malformed(jti: object) -> None:
    with pytest.raises(TokenError, match="malformed token claims"):
        verify_token(signed_claims({**LEGACY, "jti": jti}), SECRET, now=1_800_000_001)


def test_issue_token_gives_every_token_an_id_unless_one_is_given() -> None:
    given = "tok_01ARZ3NDEKTSV4RRFFQ69G5FAV"
    assert verify_token(issue_token(CALLER, SECRET, now=1000, ttl_seconds=60, token_id=given), SECRET,
                        now=1001).token_id == given
    assert verify_token(issue_token(CALLER, SECRET, now=1000, ttl_seconds=60), SECRET, now=1001).token_id
    with pytest.raises(ValueError, match="token id"):
        issue_token(CALLER, SECRET, now=1000, ttl_seconds=60, token_id="tok_nope")


def test_a_token_is_revoked_by_its_own_record_or_by_an_agent_cutoff_at_or_after_its_minting() -> None:
    _, claims = mint(CALLER, SECRET, now_ms=NOW_MS, ttl_seconds=60)
    assert not is_revoked(claims, TokenStanding(None, None))
    assert is_revoked(claims, TokenStanding("2027-01-15T08:00:00.000000Z", None))
    assert is_revoked(claims, TokenStanding(None, NOW_MS))
    assert not is_revoked(claims, TokenStanding(None, NOW_MS - 1))  # minted a millisecond after the cutoff
    legacy = verify_token(signed_claims(LEGACY), SECRET, now=1_800_000_001)
    assert is_revoked(legacy, TokenStanding(None, 1_800_000_000_500))  # a cutoff within its second covers it
    assert not is_revoked(legacy, TokenStanding(None, 1_799_999_999_999))


def test_a_record_keeps_the_claims_and_never_the_token() -> None:
    token, claims = mint(Caller("op", SystemType.SYS4, "ops", operator=True), SECRET, now_ms=NOW_MS, ttl_seconds=60)
    record = token_record(claims, "cli")
    assert record.as_dict() == {
        "id": claims.token_id, "agent_id": "op", "team": "ops", "system_type": "sys4",
        "skills": ["memory_crud", "memory_reflect", "memory_retrieve"], "operator": True, "kind": "cli",
        "issued_at": "2027-01-15T08:00:00.123000Z", "expires_at": "2027-01-15T08:01:00.000000Z", "revoked_at": None}
    assert token.split(".")[2] not in json.dumps(record.as_dict())
