from __future__ import annotations

import pytest

from agent_memory.core.models import Caller, Skill, SystemType
from agent_memory.core.ratelimit import RateLimiter
from agent_memory.core.tokens import TokenError, issue_token, verify_token

SECRET = b"s" * 32
CALLER = Caller("alice", SystemType.SYS3, "red", frozenset({Skill.CRUD}))


def test_token_round_trips_its_caller_and_expiry() -> None:
    claims = verify_token(issue_token(CALLER, SECRET, now=1000, ttl_seconds=60), SECRET, now=1059)
    assert claims.caller == CALLER and claims.issued_at == 1000 and claims.expires_at == 1060


@pytest.mark.parametrize(("mutate", "reason"), [
    (lambda t: t, "expired"),
    (lambda t: t.replace("am1.", "am2.", 1), "malformed"),
    (lambda t: t + "x", "signature"),
    (lambda t: t.rsplit(".", 1)[0], "malformed"),
    (lambda t: "am1..", "signature"),
])
def test_bad_tokens_are_refused_with_a_reason(mutate, reason: str) -> None:  # type: ignore[no-untyped-def]
    good = issue_token(CALLER, SECRET, now=1000, ttl_seconds=60)
    with pytest.raises(TokenError, match=reason):
        verify_token(mutate(good), SECRET, now=1060)


def test_token_signed_with_another_secret_is_refused() -> None:
    with pytest.raises(TokenError, match="signature"):
        verify_token(issue_token(CALLER, b"o" * 32, now=0, ttl_seconds=60), SECRET, now=1)


@pytest.mark.parametrize("ttl", [0, -1, 367 * 24 * 3600])
def test_ttl_outside_range_is_refused(ttl: int) -> None:
    with pytest.raises(ValueError):
        issue_token(CALLER, SECRET, now=0, ttl_seconds=ttl)


def test_rate_limiter_allows_a_burst_then_refills_at_the_rate() -> None:
    limiter = RateLimiter(rate=2.0, burst=3)
    assert [limiter.acquire("a", 0.0) for _ in range(3)] == [None, None, None]
    assert limiter.acquire("a", 0.0) == pytest.approx(0.5)
    assert limiter.acquire("b", 0.0) is None  # per caller
    assert limiter.acquire("a", 0.5) is None
    assert limiter.acquire("a", 0.5) == pytest.approx(0.5)


def test_rate_limiter_with_zero_rate_never_limits() -> None:
    limiter = RateLimiter(rate=0, burst=1)
    assert all(limiter.acquire("a", 0.0) is None for _ in range(1000))
