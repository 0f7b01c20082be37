"""Bearer tokens: HMAC-SHA256-signed caller claims with an expiry.

Format: `am1.<base64url(JSON claims)>.<base64url(HMAC-SHA256(secret, "am1." + payload))>`, claims
`{agent_id, system_type, team, skills, iat, exp, jti}` (times in seconds since the epoch), plus
`op: true` on an operator token (`agent-memory token issue --operator`): the memory console's
every-scope access. An older server refuses an operator token as malformed, never as an ordinary one.

`jti` is the token's id, `tok_` + a ULID (whose first 48 bits are the millisecond it was minted):
what `agent-memory token list` shows and `token revoke` names. Tokens minted before ids existed
have none and are still accepted (revocable only with the rest of their agent's tokens).
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

from agent_memory.core.access.identity import parse_identity
from agent_memory.core.model.errors import Forbidden
from agent_memory.core.model.ids import new_ulid
from agent_memory.core.model.models import Caller, Skill

PREFIX = "am1"
_B64URL = re.compile(r"[A-Za-z0-9_-]+")
MAX_TTL_SECONDS = 366 * 24 * 3600
TOKEN_ID = re.compile(r"tok_[0-9A-HJKMNP-TV-Z]{26}")
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


class TokenError(ValueError):
    """Why a token is refused: missing, malformed, forged (or another secret), expired."""


@dataclass(frozen=True, slots=True)
class TokenClaims:
    caller: Caller
    issued_at: int
    expires_at: int
    token_id: str | None = None  # None: a token minted before tokens had ids

    def as_dict(self) -> dict[str, object]:
        return {
            "agent_id": self.caller.agent_id,
            "system_type": self.caller.system_type.value,
            "team": self.caller.team,
            "skills": sorted(skill.value for skill in self.caller.skills),
            "iat": self.issued_at,
            "exp": self.expires_at,
        } | ({"op": True} if self.caller.operator else {}) | ({"jti": self.token_id} if self.token_id else {})

    @property
    def issued_ms(self) -> int:
        """When the token was minted, in milliseconds: from its id, else the first millisecond of
        its `iat` second (so a revocation at any time in that second covers an id-less token)."""
        if self.token_id is None:
            return self.issued_at * 1000
        return token_id_ms(self.token_id)


def new_token_id(now_ms: int | None = None) -> str:
    return "tok_" + new_ulid(now_ms)


def token_id_ms(token_id: str) -> int:
    """The millisecond a token id was made at (its ULID's first ten characters)."""
    value = 0
    for char in token_id.removeprefix("tok_")[:10]:
        value = value * 32 + _CROCKFORD.index(char)
    return value


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


def issue_token(caller: Caller, secret: bytes, *, now: int, ttl_seconds: int, token_id: str | None = None) -> str:
    """A signed token with id `token_id` (default: a new id of the second `now`).

    Raises: ValueError for a ttl outside 1 second..366 days, or a malformed token id."""
    return _encode(_claims(caller, now=now, ttl_seconds=ttl_seconds, token_id=token_id or new_token_id(now * 1000)),
                   secret)


def mint(caller: Caller, secret: bytes, *, now_ms: int, ttl_seconds: int) -> tuple[str, TokenClaims]:
    """A new token for `caller` minted at `now_ms` (its id carries that millisecond), and its claims.

    Raises: ValueError for a ttl outside 1 second..366 days."""
    claims = _claims(caller, now=now_ms // 1000, ttl_seconds=ttl_seconds, token_id=new_token_id(now_ms))
    return _encode(claims, secret), claims


def check_ttl(ttl_seconds: int) -> None:
    """Raises: ValueError for a ttl outside 1 second..366 days."""
    if not 0 < ttl_seconds <= MAX_TTL_SECONDS:
        raise ValueError(f"ttl must be between 1 and {MAX_TTL_SECONDS} seconds")


def _claims(caller: Caller, *, now: int, ttl_seconds: int, token_id: str) -> TokenClaims:
    check_ttl(ttl_seconds)
    if not TOKEN_ID.fullmatch(token_id):
        raise ValueError("a token id is tok_ and a ULID")
    return TokenClaims(caller=caller, issued_at=now, expires_at=now + ttl_seconds, token_id=token_id)


def _encode(claims: TokenClaims, secret: bytes) -> str:
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
        token_id = None  # no jti: minted before tokens had ids
        if "jti" in data:
            token_id = data.pop("jti")
            if not (isinstance(token_id, str) and TOKEN_ID.fullmatch(token_id)):
                raise ValueError("jti must be a token id")
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
    return TokenClaims(caller=caller, issued_at=issued_at, expires_at=expires_at, token_id=token_id)
