"""Entry ids (`mem_` + ULID) and etags."""

from __future__ import annotations

import secrets
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_ulid(now_ms: int | None = None) -> str:
    """A 26-character ULID: 48 bits of milliseconds, then 80 random bits."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms << 80) | secrets.randbits(80)
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_entry_id() -> str:
    return "mem_" + new_ulid()


def new_etag() -> str:
    return secrets.token_hex(10)


def new_request_id() -> str:
    return "req_" + new_ulid()
