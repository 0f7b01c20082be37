"""Secrets are never stored: find API keys, tokens, passwords, private keys and credentials in
text and replace each with a readable marker, `[REDACTED:<kind>]` (pure; standard library only).

Three kinds of detector, most specific first (a span claimed by one is not claimed again):
1. **Formats** a provider gives its keys (`sk-ant-...`, `ghp_...`, `AKIA...`, `xoxb-...`, JWTs,
   PEM private key blocks, ...): the whole value is replaced.
2. **Places** that hold a credential whatever it looks like: the password of a URL
   (`postgres://user:PW@host`), `Authorization: Bearer X` / `Basic X`, an Azure SAS `sig=`,
   `mysql -pPW`, `--password PW`.
3. **Assignments** to a name that says secret (`password=`, `"api_key": "..."`, `DB_PASS: ...`,
   `client_secret = '...'`, `X-API-Key: ...`) and prose (`the password is Blue-Otter-4421`): only
   the value is replaced, and only when it looks like a value rather than a type (`str`), a
   reference (`settings.token`, `$DB_PASSWORD`, `os.environ[...]`), a placeholder (`<token>`,
   `sk-...`, `YOUR_API_KEY`, `xxxx`) or a plain word of prose (`the password: it is in the vault`).

Measured on `tests/fixtures/secrets_corpus.jsonl` by `tests/bench/bench_secrets.py`.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, replace

from agent_memory.core.model.models import Entry

_B64 = r"A-Za-z0-9+/"
_URL = r"A-Za-z0-9_-"

# (kind, pattern): the secret is group "v" when the pattern has one, else the whole match.
FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(rule, flags)) for kind, rule, flags in (
    ("private_key", r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----.*?"
                    r"(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----|\Z)", re.S),
    ("anthropic_key", rf"(?<![{_URL}])sk-ant-[a-z]{{2,8}}\d{{2}}-[{_URL}]{{40,}}", 0),
    ("openai_key", rf"(?<![{_URL}])sk-(?:proj-|svcacct-|admin-|None-)?(?=[{_URL}]*\d)[{_URL}]{{20,}}", 0),
    ("github_token", r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})", 0),
    ("gitlab_token", rf"(?<![{_URL}])gl(?:pat|dt|ptt|rt)-[{_URL}]{{20,}}", 0),
    ("slack_token", r"(?<![A-Za-z0-9-])xox[abposr]-(?=[A-Za-z0-9-]*\d)[A-Za-z0-9-]{10,}"
                    r"|xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{32,}", 0),
    ("slack_webhook", r"(?<=hooks\.slack\.com/services/)(?P<v>T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,})", 0),
    ("stripe_key", r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"
                   r"|(?<![A-Za-z0-9])whsec_[A-Za-z0-9+/=]{24,}", 0),
    ("google_api_key", rf"(?<![{_URL}])AIza[{_URL}]{{35}}(?![{_URL}])", 0),
    ("aws_access_key", r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z2-7]{16}(?![A-Z0-9])", 0),
    ("azure_client_secret", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])", 0),
    ("jwt", rf"(?<![{_URL}])eyJ[{_URL}]{{8,}}\.eyJ[{_URL}]{{8,}}\.[{_URL}]{{8,}}", 0),
    ("agent_memory_token", rf"(?<![{_URL}])am1\.[{_URL}]{{16,}}\.[{_URL}]{{20,}}", 0),
    ("npm_token", r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", 0),
    ("pypi_token", rf"pypi-AgEIcHlwaS5vcmc[{_URL}]{{40,}}", 0),
    ("sendgrid_key", rf"(?<![A-Za-z0-9])SG\.[{_URL}]{{22}}\.[{_URL}]{{43}}", 0),
    ("huggingface_token", r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{34,}(?![A-Za-z0-9])", 0),
    ("telegram_token", rf"(?<![0-9])\d{{8,10}}:AA[{_URL}]{{33}}(?![{_URL}])", 0),
    ("digitalocean_token", r"(?<![A-Za-z0-9])do[opr]_v1_[a-f0-9]{64}", 0),
    ("twilio_key", r"(?<![A-Za-z0-9])(?:SK|AC)[0-9a-f]{32}(?![A-Za-z0-9])", 0),
    ("mailchimp_key", r"(?<![A-Za-z0-9])[0-9a-f]{32}-us\d{1,2}(?![A-Za-z0-9])", 0),
    ("shopify_token", r"(?<![A-Za-z0-9])shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}", 0),
))

PLACES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(pattern, re.I)) for kind, pattern in (
    ("password", r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@'\"]*:(?P<v>[^\s/@'\"]+)@[A-Za-z0-9.-]"),
    ("bearer_token", r"\bbearer\s+(?P<v>[A-Za-z0-9._~+/=-]{16,})"),
    ("basic_auth", rf"\bbasic\s+(?P<v>[{_B64}]{{8,}}={{0,2}})(?![{_B64}=])"),
    ("azure_sas", r"(?<=[?&])sig=(?P<v>[A-Za-z0-9%+/=]{20,})"),
    ("password", r"\b(?:mysql|mysqldump|mysqladmin)\b[^\n]*?\s-p(?P<v>[^\s-]\S*)"),
    ("password", r"\blogin\b[^\n]*?\s-p\s+(?P<v>\S+)"),
    ("password", r"(?<![\w-])--(?:password|passwd|token|api-key|secret)(?:=|\s+)(?P<v>[^\s'\"]+)"),
))

_NAME = r"(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,80})"
ASSIGNMENT = re.compile(
    rf"(?P<q>[\"']?){_NAME}(?P=q)[ \t]*(?P<op>:=|=>|[:=])[ \t]*"
    r"(?:\"(?P<dq>[^\"\n]{1,300})\"|'(?P<sq>[^'\n]{1,300})'|(?P<bare>[^\s'\"<>]{1,300}))")
XML_SETTING = re.compile(r"key=\"(?P<name>[^\"]{1,80})\"\s+value=\"(?P<dq>[^\"\n]{1,300})\"", re.I)
PROSE = re.compile(r"\b(?P<name>password|passphrase|passwd|token|secret|api key|access key|secret key)"
                   r"(?:\s+(?:for|of|to|on)(?:\s+[\w.-]+){1,3}?)?(?:\s+(?:is|was|=)|:)\s+(?P<bare>[^\s'\"<>]{8,300})",
                   re.I)

_SECRET_LAST = {"password", "passwd", "pwd", "pass", "passphrase", "secret", "token", "apikey", "credential",
                "credentials", "secretkey", "accesskey"}
_SECRET_PAIRS = {"api key", "access key", "secret key", "private key", "account key", "subscription key",
                 "auth key", "master key", "signing key", "encryption key", "client secret", "app secret"}
_GLUED = ("password", "passwd", "token", "secret", "apikey")  # PGPASSWORD, GHTOKEN
_NOT_VALUES = {"none", "null", "nil", "true", "false", "str", "string", "int", "bytes", "bool", "optional",
               "secretstr", "any", "object", "required", "undefined", "empty", "env", "secret", "password",
               "token", "bearer", "basic", "redacted", "hidden", "masked", "unset", "default"}
_PLACEHOLDER = re.compile(r"your|example|placeholder|redacted|dummy|xxxx|\*\*\*|\.\.\.|…|<|>|\{\{|changeme|"
                          r"replace[_-]?me|insert|^[$%{*\[(@]|\(", re.I)
_CODE_REFERENCE = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+$|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    start: int
    end: int


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _name_words(name: str) -> list[str]:
    return [w.lower() for part in re.split(r"[_.\-]+", name) for w in _CAMEL.findall(part)]


def secret_name(name: str) -> bool:
    """Whether an assigned name says it holds a secret: `DB_PASSWORD`, `SecretAccessKey`, `x-api-key`
    (not `password_min_length`, `max_tokens`, `api_key_header`, `bypass`)."""
    words = _name_words(name)
    return bool(words) and (words[-1] in _SECRET_LAST or " ".join(words[-2:]) in _SECRET_PAIRS
                            or words[-1].endswith(_GLUED) and name.isupper())


def _plausible(value: str, *, quoted: bool, env_style: bool) -> bool:
    """Whether an assigned value is a credential rather than a type, reference, placeholder or word."""
    if len(value) < 4 or value.lower() in _NOT_VALUES or _PLACEHOLDER.search(value):
        return False
    if len(set(value)) <= 2 or _CODE_REFERENCE.match(value) or "[" in value:
        return False
    if quoted or env_style:
        return True
    has_digit, has_alpha = any(c.isdigit() for c in value), any(c.isalpha() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    mixed = value != value.lower() and value != value.upper()
    return len(value) >= 6 and (has_digit and has_alpha or has_symbol and has_alpha or mixed and len(value) >= 10)


def _trim(value: str) -> str:
    """An unquoted value ends at the next `; name=` / `& name=` / `, name=` and loses trailing punctuation."""
    cut = re.search(r"[&;,]\s*[A-Za-z_][\w.-]*=", value)
    if cut:
        value = value[: cut.start()]
    return value.rstrip(".,;:)]}!?")


def _assignments(text: str) -> list[Finding]:
    found = []
    for pattern in (ASSIGNMENT, XML_SETTING, PROSE):
        for m in _matches(pattern, text):
            groups = m.groupdict()
            group = next(g for g in ("dq", "sq", "bare") if groups.get(g) is not None)
            value = m.group(group)
            quoted = group != "bare"
            if not quoted:
                value = _trim(value)
            env_style = pattern is ASSIGNMENT and m.group("op") == "=" and m.group("name").isupper() and \
                text[m.end("name"):m.start(group)] == "="
            if pattern is PROSE and not _plausible(value, quoted=False, env_style=False):
                continue
            if value and _plausible(value, quoted=quoted, env_style=env_style):
                start = m.start(group)
                found.append(Finding(_assignment_kind(m.group("name")), start, start + len(value)))
    return found


def _matches(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """Matches whose name says secret; after any other name the search goes on right behind that
    name, so `Protocol=https;AccountKey=...` still finds the key inside the first value."""
    found, at = [], 0
    while (m := pattern.search(text, at)) is not None:
        if secret_name(m.group("name")):
            found.append(m)
            at = m.end()
        else:
            at = m.end("name")
    return found


def _assignment_kind(name: str) -> str:
    words = _name_words(name)
    if any(w.endswith(("password", "passwd", "pwd", "pass", "passphrase")) for w in words):
        return "password"
    if words and words[-1] == "token":
        return "token"
    return "api_key" if "key" in words or "apikey" in words else "secret"


def _basic_credentials(value: str) -> bool:
    try:
        return b":" in base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False


def find_secrets(text: str) -> list[Finding]:
    """The secrets in `text`, in order, never overlapping (the more specific detector wins)."""
    claimed: list[Finding] = []

    def claim(kind: str, start: int, end: int) -> None:
        if end > start and not any(start < f.end and f.start < end for f in claimed):
            claimed.append(Finding(kind, start, end))

    for kind, pattern in FORMATS:
        for m in pattern.finditer(text):
            span = m.span("v") if "v" in pattern.groupindex else m.span()
            if not _PLACEHOLDER.search(m.group()) or kind == "private_key":
                claim(kind, *span)
    for kind, pattern in PLACES:
        for m in pattern.finditer(text):
            value = _trim(m.group("v"))
            if kind == "basic_auth" and not _basic_credentials(value):
                continue
            if kind in ("bearer_token", "basic_auth", "azure_sas") or _plausible(value, quoted=False, env_style=True):
                claim(kind, m.start("v"), m.start("v") + len(value))
    for finding in _assignments(text):
        claim(finding.kind, finding.start, finding.end)
    return sorted(claimed, key=lambda f: f.start)


def redact(text: str) -> tuple[str, int]:
    """`text` with every secret replaced by `[REDACTED:<kind>]`, and how many were replaced."""
    findings = find_secrets(text)
    if not findings:
        return text, 0
    parts, at = [], 0
    for f in findings:
        parts += [text[at:f.start], marker(f.kind)]
        at = f.end
    parts.append(text[at:])
    return "".join(parts), len(findings)


@dataclass(frozen=True, slots=True)
class Redactor:
    """Redaction as configured (`redact_secrets`); switched off, text passes unchanged."""

    enabled: bool = True

    def text(self, text: str, limit: int | None = None) -> tuple[str, int]:
        """`text` redacted; a text within `limit` stays within it (a marker longer than its secret is cut)."""
        if not self.enabled:
            return text, 0
        clean, found = redact(text)
        if limit is not None and len(clean) > limit >= len(text):
            clean = clean[:limit]
        return clean, found

    def texts(self, texts: tuple[str, ...], limit: int | None = None) -> tuple[tuple[str, ...], int]:
        done = [self.text(t, limit) for t in texts]
        return tuple(t for t, _ in done), sum(n for _, n in done)

    def entry(self, entry: Entry, limit: int | None = None, tag_limit: int = 128) -> tuple[Entry, int]:
        """`entry` with its content and tags redacted (a tag holds metadata values too: `key=value`)."""
        content, in_content = self.text(entry.content, limit)
        tags, in_tags = self.texts(entry.tags, tag_limit)
        if not in_content + in_tags:
            return entry, 0
        return replace(entry, content=content, tags=tuple(dict.fromkeys(tags))), in_content + in_tags
