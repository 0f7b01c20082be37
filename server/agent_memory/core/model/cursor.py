"""Opaque, signed pagination cursors bound to the caller and the query."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass

from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.models import Entry

_SIG_BYTES = 16


@dataclass(frozen=True, slots=True)
class Position:
    """Keyset position: the last entry of the previous page (newest-first order)."""

    created_at: str
    entry_id: str


@dataclass(frozen=True, slots=True)
class Page:
    """One page of entries, and the cursor of the next (None on the last)."""

    items: list[Entry]
    next_cursor: str | None

    @property
    def has_more(self) -> bool:
        return self.next_cursor is not None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CursorCodec:
    """Encodes keyset positions as `payload.signature`, HMAC-SHA256 under a server secret."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()[:_SIG_BYTES]

    def encode(self, position: Position, binding: str) -> str:
        """Args:
        binding: a digest of the caller and query the cursor may be reused with.
        """
        payload = json.dumps(
            {"c": position.created_at, "i": position.entry_id, "b": binding},
            separators=(",", ":"),
        ).encode()
        return f"{_b64(payload)}.{_b64(self._sign(payload))}"

    def decode(self, cursor: str, binding: str) -> Position:
        """Raises: InvalidParams when the cursor is malformed, tampered with or bound elsewhere."""
        try:
            payload_part, sig_part = cursor.split(".")
            payload = _unb64(payload_part)
            signature = _unb64(sig_part)
        except (ValueError, binascii.Error):
            raise InvalidParams("cursor is malformed: pass next_cursor exactly as received, or drop cursor to "
                                "start from the first page", field="cursor") from None
        if not hmac.compare_digest(signature, self._sign(payload)):
            raise InvalidParams("cursor is not valid (altered or from another server): pass next_cursor exactly "
                                "as received, or drop cursor to start from the first page", field="cursor")
        data = json.loads(payload)
        if data.get("b") != binding:
            raise InvalidParams(
                "cursor belongs to another query or caller; repeat the same filters or drop the cursor",
                field="cursor",
            )
        return Position(created_at=str(data["c"]), entry_id=str(data["i"]))


def query_binding(*parts: object) -> str:
    """A stable digest of the values a cursor is bound to."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
