from __future__ import annotations

import pytest

from agent_memory.core.access.ratelimit import RateLimiter
from agent_memory.core.access.tokens import TokenError, issue_token, verify_token
from agent_memory.core.model.models import Caller, Skill, SystemType

SECRET = b"s" * 32
CALLER = Caller("alice", SystemType.SYS3, "red", frozenset({Skill.CRUD}))


def test_token_round_trips_its_caller_and_expiry() -> None:
    claims = verify_token(issue_token(CALLER, SECRET, now=1000, ttl_seconds=60), SECRET, now=1059)
    assert claims.caller == CALLER and claims.issued_at == 1000 and claims.expires_at == 1060


@pytest.mark.parametrize(("mutate", "reason"), [
    (lambda t: t, "expired"),
    (lambda t: t.replace("am1.", "am2.", 1), "malformed"),
    (lambda t: t + "x", "signature|malformed"),
    (lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"), "signature|malformed"),
    (lambda t: t.rsplit(".", 1)[0], "malformed"),
    (lambda t: "am1..", "malformed"),
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


@pytest.mark.parametrize("mutate", [
    lambda t: t[:-4] + "!!" + t[-4:],          # junk inside the signature (the decoder used to skip it)
    lambda t: t + "==",                          # padding
    lambda t: t + "=",
    lambda t: t.replace(".", ".!", 1),          # junk at the start of the claims
])
def test_tokens_decode_strictly_one_spelling_per_token(mutate) -> None:  # type: ignore[no-untyped-def]
    good = issue_token(CALLER, SECRET, now=1000, ttl_seconds=60)
    assert verify_token(good, SECRET, now=1001).caller == CALLER
    with pytest.raises(TokenError):
        verify_token(mutate(good), SECRET, now=1001)


def test_a_signature_with_non_canonical_trailing_bits_is_refused() -> None:
    # 32 bytes of HMAC are 43 base64url characters; the last one carries 2 unused bits. Setting
    # them decodes to the same bytes, so a lenient decoder accepts four spellings of one token.
    good = issue_token(CALLER, SECRET, now=1000, ttl_seconds=60)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(good[-1])
    for other in {alphabet[(last & ~3) | bits] for bits in range(4)} - {good[-1]}:
        with pytest.raises(TokenError):
            verify_token(good[:-1] + other, SECRET, now=1001)


def test_rate_limited_wait_is_never_zero() -> None:
    limiter = RateLimiter(rate=1000.0, burst=1)
    assert limiter.acquire("a", 0.0) is None
    wait = limiter.acquire("a", 0.0009999)  # almost a whole token back
    assert wait is not None and wait >= 0.001
