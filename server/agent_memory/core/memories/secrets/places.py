"""Places that hold a credential whatever it looks like: the password of a URL or a Go DSN, a token
as a URL's user, an Authorization header, a session cookie and a `.pgpass` line (command lines are
in `commands.py`)."""

from __future__ import annotations

import re

from agent_memory.core.memories.secrets.rules import COLON, Found, Groups, Rule, Scan
from agent_memory.core.memories.secrets.values import (
    basic_credentials,
    classes,
    is_public,
    not_a_value,
    password_value,
    random_looking,
    trim,
    wordish,
)

_PAIR = re.compile(r"(?:^|[\s;,:'\"{(])(?P<name>[A-Za-z0-9_.!#$%&*+^|~-]{1,64})=(?P<v>[^;,\s'\"]{1,4096})")
_SESSIONISH = re.compile(r"sess|sid|auth|token|remember|login|jwt|secure", re.I)
# A CSRF token is no credential: every page of the site holds it, and alone it authenticates nothing.
_CSRF = re.compile(r"csrf|xsrf", re.I)
_SESSIONISH_NAME = r"(?:sess|sid|auth|token|remember|login|jwt|secure)[^\s=;,]{0,40}+="  # in a cookie line
_CHALLENGE = re.compile(r"[a-z_][a-z0-9_.-]*=")  # `Bearer realm=...`: a challenge's parameter
_DSN_PASSWORD = re.compile(rb"(?<=[A-Za-z0-9_.-]):(?P<v>[^\s:/@'\"<>`]{1,256})\Z")
_HOST = re.compile(r"[A-Za-z0-9.*_\[\]-]{1,253}")
def _url(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    value = scan.text[g.start("v"):g.end("v")]
    if password_value(value, "assign", quoted=True):
        yield "password", *g.span("v")


def _url_token(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    start, end = g.span("tok")
    if random_looking(scan.text[start:end], 20):
        yield "token", start, end


def _authorization(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    start = g.start("v")
    value = trim(scan.text[start:g.end("v")])
    scheme = g.group("scheme")
    if scheme == b"basic":
        if basic_credentials(value):
            yield "basic_auth", start, start + len(value)
    elif not _CHALLENGE.match(value) and (random_looking(value) or scheme is not None and _token_like(value)):
        yield "bearer_token", start, start + len(value)


def _bearer(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    start = g.start("v")
    value = trim(scan.text[start:g.end("v")])
    if _token_like(value):
        yield "bearer_token", start, start + len(value)


def _token_like(value: str) -> bool:
    """A bearer token: long, not a word, a name's value (`resource_metadata="..."`) or a placeholder."""
    lower, upper, digit, _ = classes(value)
    return (len(value) >= 16 and (digit or lower and upper) and not _CHALLENGE.match(value) and not wordish(value)
            and not not_a_value(value) and not is_public(value))


def _cookie(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    yield from cookie_pairs(scan.text, g.start("pairs") - 1, g.end("pairs"))


def cookie_pairs(text: str, start: int, end: int) -> Found:
    for pair in _PAIR.finditer(text, start, end):
        value = trim(pair.group("v"))
        name = pair.group("name")
        if _SESSIONISH.search(name) and not _CSRF.search(name) and random_looking(value):
            yield "session_cookie", pair.start("v"), pair.start("v") + len(value)


def _go_dsn(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """`user:PW@tcp(host:3306)/db`, a Go MySQL DSN: the password before the `@`."""
    at = m.start()
    before = _DSN_PASSWORD.search(scan.raw, max(0, at - 258), at)
    if before and password_value(scan.text[before.start("v"):at], "assign", quoted=True):
        yield "password", before.start("v"), at


def _pgpass(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """`host:port:database:user:password`, a line of `.pgpass`."""
    line_start = scan.text.rfind("\n", max(0, m.start() - 254), m.start()) + 1
    if _HOST.fullmatch(scan.text, line_start, m.start()):
        start, end = g.span("v")
        if password_value(scan.text[start:end], "assign", quoted=True):
            yield "password", start, end


RULES: tuple[Rule, ...] = (
    Rule("raw", COLON, r"//(?P<user>[^\s:/@'\"<>`]{0,128}+):(?P<v>[^\s/@'\"<>`]{1,256}+)@(?=[A-Za-z0-9.\[-])", _url, 1),
    # A token as an HTTP URL's user (`https://<token>@github.com/...`, a Sentry DSN's key; an ssh://
    # URL's user is a name), and the password of a Go MySQL DSN (`user:PW@tcp(host:3306)/db`).
    Rule("raw", COLON, r"//(?<=http://|ttps://)(?P<tok>[A-Za-z0-9_~.+-]{20,128}+)@(?=[A-Za-z0-9.\[-])", _url_token, 1),
    Rule("raw", "@", r"(?:tcp6?|udp|unix)\(", _go_dsn, 1),
    Rule("raw", COLON, r"[0-9*][0-9]{0,4}+:[^\s:]{1,64}+:[^\s:]{1,64}+:(?P<v>[^\s]{1,256}+)[ \t]*+(?=\r?\n|$)",
         _pgpass, 1),
    # `Authorization: ...`, `"Authorization": "..."`, and a server's directive: `proxy_set_header
    # Authorization "Basic ..."`, `RequestHeader set Authorization "Bearer ..."`.
    Rule("low", "auth", r"orization(?:\\?[\"']?\]?[ \t]*+[:=][ \t]*+(?:f?\\?[\"'])?"
                      r"|[ \t]++\\?[\"']?(?=(?:basic|bearer|token|digest)[ \t]))"
                      r"(?:(?P<scheme>[a-z][a-z0-9._-]{1,30}+)[ \t]++)?"
                      r"(?P<v>[^\s\"'<>`,;)\\-][^\s\"'<>`,;)\\]{7,4096}+)",
         _authorization, 1),
    Rule("low", "bearer", r"[ \t]++(?P<v>[a-z0-9._~+/=-]{16,4096}+)", _bearer, 1),
    # The pairs of a cookie line: `name=value` separated by `;` or `,` (a space only after one), one
    # of them named for a session; the search reads no further than the pairs go.
    Rule("low", "cookie", r"s?(?:\\?[\"'])?(?:[ \t]*+[:=]|(?<=--cookie)[ \t])[ \t]*+"
                          r"(?=(?:[^\s;,]|[;,][ \t]*+){0,4000}?" + _SESSIONISH_NAME + r")"
                          r"(?P<pairs>(?:[^\s;,]++|[;,][ \t]*+){1,2000}+)", _cookie, 1),
)
