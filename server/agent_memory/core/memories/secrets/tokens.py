"""Tokens whose shape alone says too little, so that a handler checks them further: an AWS secret
key or a Twilio auth token found beside the id it goes with, a Telegram bot token (its bot's
number before it), a Discord bot token (its first part is a user id in base64), and keys whose
prefix is a run of hex (Mailgun's, Mailchimp's). Each handler is given the match of a rule in
`formats.py`."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from agent_memory.core.memories.secrets.rules import Found, Groups, Handler, Scan

_AWS_SECRET = re.compile(rb"(?<![A-Za-z0-9/+=])(?:[A-Za-z0-9/+]{40}|[A-Za-z0-9/+]{100,}+={0,2})(?![A-Za-z0-9/+=])")
_HEX32 = re.compile(rb"(?<![A-Za-z0-9])[0-9a-f]{32}(?![A-Za-z0-9])")
_BETWEEN = re.compile(rb"[\s\"'`,:;|]{1,12}")  # between an account SID and its auth token
_B64URL = re.compile(rb"[A-Za-z0-9_-]")


def aws_secret(scan: Scan, start: int, end: int) -> Iterator[tuple[str, int, int]]:
    """An AWS secret access key is 40 characters of base64 with nothing to name it, found beside
    its key id (a CSV row, `aws configure`, a pair in chat): mixed case and digits, not a hash."""
    for m in _AWS_SECRET.finditer(scan.raw, max(0, start - 160), min(len(scan.raw), end + 240)):
        value = scan.text[m.start():m.end()]
        if (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)
                and "EXAMPLE" not in value):
            yield "aws_secret_key", m.start(), m.end()


def twilio(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """A Twilio auth token is 32 hex with nothing to name it, given right beside its account SID
    (`AC` and 32 hex, public: it is in every API URL) with only punctuation between: `-u AC...:TOKEN`,
    `Client("AC...", "TOKEN")`, a CSV row. Hex with words between (`trace id ... for account AC...`)
    is something else; a token named as one is found by its name."""
    start, end = m.start(), m.end()
    if start > 0 and scan.raw[start - 1:start].isalnum():
        return
    for hit in _HEX32.finditer(scan.raw, max(0, start - 48), min(len(scan.raw), end + 48)):
        between = scan.raw[end:hit.start()] if hit.start() >= end else scan.raw[hit.end():start]
        if _BETWEEN.fullmatch(between):
            yield "twilio_auth_token", hit.start(), hit.end()


def telegram(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """`123456789:AA...`: the bot's number, 8 to 10 digits, alone or after `/bot` in an API URL."""
    start = m.start() - 8
    while start > 0 and scan.raw[start - 1:start].isdigit() and m.start() - start < 10:
        start -= 1
    glued = start > 0 and scan.raw[start - 1:start].isalnum()
    if not glued or scan.raw[max(0, start - 4):start] == b"/bot":
        yield "telegram_token", start, m.end()


def discord(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """`<user id in base64>.<6>.<27 to 38>`: the match is the last part; the first is found
    backwards and must decode to the bot's user id (17 to 20 digits)."""
    end_first = m.start() - 7  # the first separator
    start = end_first
    while start > 0 and end_first - start < 28 and _B64URL.match(scan.raw, start - 1):
        start -= 1
    first = scan.raw[start:end_first]
    if not 23 <= len(first) <= 27 or first[:1] not in (b"M", b"N", b"O"):
        return
    try:
        user = base64.urlsafe_b64decode(first + b"=" * (-len(first) % 4))
    except (binascii.Error, ValueError):
        return
    if user.isdigit() and 17 <= len(user) <= 20:
        yield "discord_token", start, m.end()


def hex_led(kind: str, back: int) -> Handler:
    """A key whose first `back` characters are hex before a `-` (Mailchimp `<32 hex>-us6`,
    Mailgun `<32 hex>-<8 hex>-<8 hex>`), not glued to a word."""
    def handle(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
        start = m.start() - back
        if not (start > 0 and scan.raw[start - 1:start].isalnum()):
            yield kind, start, m.end()
    return handle
