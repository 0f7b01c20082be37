"""Bearer tokens: HMAC-SHA256-signed caller claims with an expiry.

Format: `am1.<base64url(JSON claims)>.<base64url(HMAC-SHA256(secret, "am1." + payload))>`, claims
`{agent_id, system_type, team, skills, iat, exp}` (seconds since the epoch), plus `op: true` on an
operator token (`agent-memory token issue --operator`): the memory console's every-scope access.
An older server refuses an operator token as malformed, never as an ordinary one.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import hmac
import json
import re
from dataclasses import dataclass

from agent_memory.core.errors import Forbidden
from agent_memory.core.identity import parse_identity
from agent_memory.core.models import Caller, Skill

PREFIX = "am1"
_B64URL = re.compile(r"[A-Za-z0-9_-]+")
MAX_TTL_SECONDS = 366 * 24 * 3600


class TokenError(ValueError):
    """Why a token is refused: missing, malformed, forged (or another secret), expired."""


@dataclass(frozen=True, slots=True)
class TokenClaims:
    caller: Caller
    issued_at: int
    expires_at: int

    def as_dict(self) -> dict[str, object]:
        return {
            "agent_id": self.caller.agent_id,
            "system_type": self.caller.system_type.value,
            "team": self.caller.team,
            "skills": sorted(skill.value for skill in self.caller.skills),
            "iat": self.issued_at,
            "exp": self.expires_at,
        } | ({"op": True} if self.caller.operator else {})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    """Strict: only the URL-safe alphabet, no padding, and the one canonical spelling of the bytes
    (so a token has exactly one accepted form).

    Raises:
        ValueError: anything else.
    """
    if not _B64URL.fullmatch(text):
        raise ValueError("not unpadded base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not the canonical base64url spelling")
    return data


def _sign(secret: bytes, signed_part: str) -> bytes:
    return hmac.new(secret, signed_part.encode("ascii"), hashlib.sha256).digest()


def issue_token(caller: Caller, secret: bytes, *, now: int, ttl_seconds: int) -> str:
    """Raises: ValueError for a ttl outside 1 second..366 days."""
    if not 0 < ttl_seconds <= MAX_TTL_SECONDS:
        raise ValueError(f"ttl must be between 1 and {MAX_TTL_SECONDS} seconds")
    claims = TokenClaims(caller=caller, issued_at=now, expires_at=now + ttl_seconds)
    payload = _b64(json.dumps(claims.as_dict(), separators=(",", ":"), sort_keys=True).encode())
    signed_part = f"{PREFIX}.{payload}"
    return f"{signed_part}.{_b64(_sign(secret, signed_part))}"


def verify_token(token: str, secret: bytes, *, now: int) -> TokenClaims:
    """Raises: TokenError saying why the token is refused (never echoing it)."""
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != PREFIX:
        raise TokenError("malformed token")
    try:
        signature = _unb64(parts[2])
    except (ValueError, binascii.Error):
        raise TokenError("malformed token") from None
    if not hmac.compare_digest(signature, _sign(secret, f"{parts[0]}.{parts[1]}")):
        raise TokenError("bad signature (forged, altered, or signed with another secret)")
    try:
        data = json.loads(_unb64(parts[1]))
        expires_at, issued_at = int(data.pop("exp")), int(data.pop("iat"))
        operator = data.pop("op", False)
        if operator is not True and operator is not False:
            raise ValueError("op must be a boolean")
        caller = parse_identity(data, default_skills=frozenset(Skill))
    except Forbidden as error:  # signed by our secret, so its claims may be described
        raise TokenError(f"token claims are not a valid identity ({error.message}); mint a new token with "
                         "agent-memory token issue") from None
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise TokenError("malformed token claims") from None
    if operator:
        caller = dataclasses.replace(caller, operator=True)
    if now >= expires_at:
        raise TokenError("token expired")
    return TokenClaims(caller=caller, issued_at=issued_at, expires_at=expires_at)
