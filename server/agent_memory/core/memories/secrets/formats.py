"""The formats providers give their keys (from the rule sets of well-kept scanners, gitleaks' above
all: formats are facts), PEM private key blocks, and an AWS secret key found beside its key id.

Most formats are a literal prefix ending in a separator (`ghp_`, `sk-`, `glpat-`, `hvs.`) and a
long random body: they are one search that stops at the separators `_ . ~ -` only where at least
16 token characters follow, and checks the prefix there with a lookbehind. The rest start with
`eyJ`, `A` (`AKIA`, `AIza`), `S` (`SK`, `SG.`) or `dapi`. A token wrapped onto the next line (a
terminal's wrap, a backslash continuation) is followed there."""

from __future__ import annotations

import re

from agent_memory.core.memories.secrets import tokens
from agent_memory.core.memories.secrets.rules import COLON, DASH, DOT, Found, Groups, Handler, Rule, Scan

_URL = "A-Za-z0-9_-"
# A break inside a token: a newline (maybe escaped, maybe after a backslash) and indentation,
# when the next line goes on with the token's characters.
_BRK = r"(?:\\?\r?\n|\\n)[ \t]*+(?=[A-Za-z0-9_-]{6})"


def _tok(alphabet: str, most: int) -> str:
    """A token's body, maybe wrapped once (its length is checked by the handler)."""
    return rf"[{alphabet}]{{8,{most}}}+(?:{_BRK}[{alphabet}]{{4,{most}}}+)?"


# (kind, before, body, least): `before` is the literal prefix, ending in the separator the search
# stops at; the secret is `before` and `body`, at least `least` characters long.
SEPARATED: tuple[tuple[str, str, str, int], ...] = (
    ("anthropic_key", "sk-ant-", r"(?:api|admin|oat|ort|sid)\d\d-" + _tok(_URL, 400), 50),
    ("openai_key", "sk-", r"(?!ant-)(?:proj-|svcacct-|admin-|None-|or-v1-)?" + _tok(_URL, 400), 23),
    ("stripe_key", "sk_", r"(?:live|test|prod)_[A-Za-z0-9]{10,247}+", 0),
    ("stripe_key", "rk_", r"(?:live|test|prod)_[A-Za-z0-9]{10,247}+", 0),
    ("stripe_key", "whsec_", r"[A-Za-z0-9+/=]{24,}+", 0),
    *(("github_token", f"gh{c}_", _tok("A-Za-z0-9", 251), 40) for c in "pousr"),
    ("github_token", "github_pat_", _tok("A-Za-z0-9_", 255), 71),
    *(("gitlab_token", f"gl{p}-", _tok(_URL, 300) + r"(?:\.[0-9a-z]{9,10}(?![A-Za-z0-9]))?", 21 + len(p))
      for p in ("pat", "dt", "rt", "ptt", "cbt", "ft", "soat", "oas", "imt", "agent", "ffct")),
    ("grafana_token", "glsa_", r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?![A-Za-z0-9])", 0),
    ("grafana_token", "glc_", r"[A-Za-z0-9+/]{32,400}+={0,3}", 0),
    *(("slack_token", f"xox{c}-", r"(?=[A-Za-z0-9-]{0,60}?\d)[A-Za-z0-9-]{10,250}+", 0) for c in "abposr"),
    ("slack_token", "xoxe-", r"\d-[A-Za-z0-9]{100,250}+", 0),
    ("slack_token", "xoxe.", r"xox[bp]-\d-[A-Za-z0-9]{100,250}+", 0),
    ("slack_token", "xapp-", r"\d-[A-Z0-9]+-\d+-[a-z0-9]{32,}+", 0),
    ("sendinblue_key", "xkeysib-", r"[a-f0-9]{64}-[A-Za-z0-9]{16}", 0),
    ("supabase_key", "sbp_", r"[a-f0-9]{40}(?![A-Za-z0-9])", 0),
    ("supabase_key", "sb_", r"secret_[A-Za-z0-9_-]{20,}+", 0),
    ("notion_token", "secret_", r"[A-Za-z0-9]{43}(?![A-Za-z0-9])", 0),
    ("notion_token", "ntn_", r"\d{11}[A-Za-z0-9]{35}(?![A-Za-z0-9])", 0),
    ("sentry_token", "sntrys_", r"[A-Za-z0-9+/=_]{40,}+", 0),
    ("sentry_token", "sntryu_", r"[a-f0-9]{64}(?![A-Za-z0-9])", 0),
    *(("shopify_token", f"shp{p}_", r"[a-fA-F0-9]{32}(?![A-Za-z0-9])", 0) for p in ("at", "ss", "ca", "pa")),
    ("openshift_token", "sha256~", r"[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", 0),
    ("npm_token", "npm_", r"[A-Za-z0-9]{36}(?![A-Za-z0-9])", 0),
    ("pypi_token", "pypi-", r"AgEIcHlwaS5vcmc[A-Za-z0-9_-]{40,}+", 0),
    ("huggingface_token", "hf_", r"[A-Za-z0-9]{34,}+", 0),
    ("perplexity_key", "pplx-", r"[A-Za-z0-9]{48}(?![A-Za-z0-9])", 0),
    ("planetscale_token", "pscale_", r"(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}+", 0),
    ("pulumi_token", "pul-", r"[a-f0-9]{40}(?![A-Za-z0-9])", 0),
    ("vault_token", "hvs.", r"[A-Za-z0-9_-]{24,}+", 0),
    ("vault_token", "hvb.", r"[A-Za-z0-9_-]{24,}+", 0),
    *(("digitalocean_token", f"do{c}_", r"v1_[a-f0-9]{64}", 0) for c in "opr"),
    ("doppler_token", "dp.", r"(?:st|pt|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,44}(?![A-Za-z0-9])",
     0),
    ("docker_token", "dckr_", r"pat_[A-Za-z0-9_-]{27,}+", 0),
    ("linear_key", "lin_", r"api_[A-Za-z0-9]{40}(?![A-Za-z0-9])", 0),
    ("mailgun_key", "key-", r"[a-f0-9]{32}(?![A-Za-z0-9])", 0),
    ("cloudflare_key", "v1.0-", r"[a-f0-9]{24}-[a-f0-9]{146}", 0),
    ("agent_memory_token", "am1.", r"[A-Za-z0-9_-]{16,}+\.[A-Za-z0-9_-]{20,}+", 0),
    ("groq_key", "gsk_", r"[A-Za-z0-9]{48,60}+", 0),
    ("xai_key", "xai-", r"[A-Za-z0-9]{70,90}+", 0),
    ("flyio_token", "fo1_", r"[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", 0),
    ("tailscale_key", "tskey-", r"(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}+-[A-Za-z0-9]{20,}+", 0),
    ("square_token", "sq0atp-", r"[A-Za-z0-9_-]{22,60}+", 0),
    ("square_token", "sq0csp-", r"[A-Za-z0-9_-]{40,60}+", 0),
    ("postman_key", "PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}", 0),
    ("newrelic_key", "NRAK-", r"[A-Za-z0-9]{27}(?![A-Za-z0-9])", 0),
    ("newrelic_key", "NRII-", r"[A-Za-z0-9-]{32}(?![A-Za-z0-9])", 0),
    ("heroku_key", "HRKU-", r"AA[A-Za-z0-9_-]{58}", 0),
    ("google_oauth_secret", "GOCSPX-", r"[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])", 0),
    ("age_secret_key", "AGE-SECRET-KEY-", r"1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", 0),
    ("dynatrace_token", "dt0c01.", r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", 0),
    ("replicate_token", "r8_", r"[A-Za-z0-9]{37}(?![A-Za-z0-9])", 0),
    ("rubygems_token", "rubygems_", r"[a-f0-9]{48}(?![A-Za-z0-9])", 0),
)
# Formats found by a lookbehind of their own: (kind, lookbehind, tail, back, body, least); `tail` is
# the literal end of the prefix (its separator last), `back` how far before the separator it starts.
_LOOKBEHIND: tuple[tuple[str, str, str, int, str, int], ...] = (
    ("airtable_token", r"pat[A-Za-z0-9]{14}\.", ".", 17, r"[a-f0-9]{64}(?![A-Za-z0-9])", 0),
    ("azure_client_secret", r"[A-Za-z0-9_~.]{3}\dQ~", "Q~", 5, r"[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])", 0),
    ("terraform_token", r"(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.", "atlasv1.", 22,
     r"[A-Za-z0-9_=-]{60,70}(?![A-Za-z0-9_=-])", 0),
)
# Where a separated format can be: a separator with at least 16 token characters after it.
_ROOM = "(?=[A-Za-z0-9][A-Za-z0-9_.-]{15})"
_FILLERS = ("xxxxx", "XXXXX", "***", "...", "…", "EXAMPLE", "your", "YOUR", "<", ">", "0000000000")
_DIGIT = re.compile(r"\d")
_PEM = (rb"[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        rb"(?:(?:[ \t\r\n]|\\[nr])++(?:[A-Za-z0-9+/=]{16,}+|(?:Proc-Type|DEK-Info|Comment|Version|Hash)"
        rb":[^\r\n\\]{0,200}+))++"
        rb"(?:(?:(?:[ \t\r\n]|\\[nr])++[A-Za-z0-9+/=]{1,15}+)?(?:[ \t\r\n]|\\[nr])*+-----END[A-Z0-9 ]{0,40}-----)?")


def _check(scan: Scan, kind: str, start: int, end: int, least: int = 0) -> Found:
    """A format found at `start:end`, unless it is glued to a word, a placeholder, or too short."""
    if start > 0 and scan.raw[start - 1:start].isalnum():
        return
    token = scan.text[start:end]
    if kind == "openai_key" and not _DIGIT.search(token, 3):
        return  # sk-learn-..., prose
    if least and len(token) - token.count("\n") - token.count("\\") - token.count(" ") < least:
        return
    if any(filler in token for filler in _FILLERS):
        return
    yield kind, start, end
    if kind == "aws_access_key":
        yield from tokens.aws_secret(scan, start, end)


def _format(kind: str, before: int) -> Handler:
    def handle(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
        return _check(scan, kind, m.start() - before, m.end())
    return handle


def _inner(kind: str) -> Handler:
    def handle(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
        start, end = g.span("v")
        if not any(filler in scan.text[start:end] for filler in _FILLERS):
            yield kind, start, end
    return handle


def _separator_rules() -> tuple[Rule, ...]:
    """One search per separator: where at least 16 token characters follow, the character before
    the separator picks the formats to try, and each one's lookbehind checks its prefix. The
    search holds no groups (a group per format makes every step of it slower): which format
    matched is found again on a match, by the literal end of its prefix."""
    entries = [(kind, re.escape(before), len(before) - 1, body, least, before)
               for kind, before, body, least in SEPARATED]
    entries += [(kind, behind, back, body, least, tail) for kind, behind, tail, back, body, least in _LOOKBEHIND]
    rules = []
    for separator in "_-.~":
        groups: dict[str, list[str]] = {}
        found: list[tuple[str, int, int, bytes | None, re.Pattern[bytes]]] = []
        for kind, behind, back, body, least, tail in entries:
            if tail[-1] == separator:
                previous = tail[-2:-1]  # "": a pattern, tried after every byte
                groups.setdefault(previous, []).append(f"(?<={behind}){body}")
                found.append((kind, back, least, tail.encode() if previous else None,
                              re.compile(f"(?<={behind}){body}".encode())))
        alternatives = [f"(?<={re.escape(previous + separator)})(?:{'|'.join(alts)})" if previous else "|".join(alts)
                        for previous, alts in groups.items()]
        lead = {"-": DASH, ".": DOT}.get(separator, re.escape(separator))
        rules.append(Rule("raw", lead, _ROOM + f"(?:{'|'.join(alternatives)})", _dispatch(found), 0))
    return tuple(rules)


def _dispatch(found: list[tuple[str, int, int, bytes | None, re.Pattern[bytes]]]) -> Handler:
    by_previous: dict[int, list[tuple[str, int, int, bytes | None, re.Pattern[bytes]]]] = {}
    for entry in found:  # by the byte before the separator (a pattern's entry under every byte)
        for byte in ([entry[3][-2]] if entry[3] else range(256)):
            by_previous.setdefault(byte, []).append(entry)

    def handle(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
        at = m.start() + 1  # after the separator
        mine = [f for f in by_previous.get(scan.raw[at - 2], ()) if f[3] is None
                or scan.raw.startswith(f[3], at - len(f[3]))]
        if len(mine) == 1:  # the one prefix there: the search matched its format
            kind, back, least, _, _ = mine[0]
            return _check(scan, kind, m.start() - back, m.end(), least)
        for kind, back, least, _, exact in mine:  # prefixes ending alike (`sk_`, `gsk_`): the one that matches
            hit = exact.match(scan.raw, at)
            if hit:
                return _check(scan, kind, m.start() - back, hit.end(), least)
        return iter(())
    return handle


def _pem(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    yield "private_key", m.start(), m.end()


RULES: tuple[Rule, ...] = (
    *_separator_rules(),
    # The separator search for `-` goes on with PEM blocks and the hex-led keys of Mailchimp and Mailgun (and
    # places' options).
    Rule("raw", DASH, "----BEGIN" + _PEM.decode(), _pem, 0),
    Rule("raw", DASH, r"us(?<=[0-9a-f]{32}-us)\d{1,2}(?![A-Za-z0-9])", tokens.hex_led("mailchimp_key", 32), 0),
    Rule("raw", DASH, r"[0-9a-f](?<=[0-9a-f]{32}-.)[0-9a-f]{7}-[0-9a-f]{8}(?![A-Za-z0-9])",
         tokens.hex_led("mailgun_key", 32), 0),
    Rule("raw", "eyJ", r"[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+"
                       r"(?:\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+)?", _format("jwt", 0), 0),
    Rule("raw", "eyJ", r"(?<=sk\.eyJ)[A-Za-z0-9_-]{20,}+\.[A-Za-z0-9_-]{20,}+", _format("mapbox_token", 3), 0),
    Rule("raw", "eyJ", r"(?<=ops_eyJ)[A-Za-z0-9+/]{250,}+={0,3}", _format("onepassword_token", 4), 0),
    Rule("raw", "eyJ", r"rIjoi[A-Za-z0-9]{70,400}+={0,3}", _format("grafana_token", 0), 0),
    Rule("raw", "A", r"(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])", _format("aws_access_key", 0), 0),
    Rule("raw", "A", r"Iza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])", _format("google_api_key", 0), 0),
    Rule("raw", "A", r"C[0-9a-f]{32}(?![A-Za-z0-9])", tokens.twilio, 0),  # an account SID: its auth token beside
    Rule("raw", "A", r"TATT3[A-Za-z0-9_=-]{180,200}+", _format("atlassian_token", 0), 0),
    Rule("raw", "S", r"K[0-9a-f]{32}(?![A-Za-z0-9])", _format("twilio_key", 0), 0),
    Rule("raw", "S", r"G\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", _format("sendgrid_key", 0), 0),
    Rule("raw", "dapi", r"[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])", _format("databricks_token", 0), 0),
    Rule("raw", COLON, r"A(?<=\d{8}:A)[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])", tokens.telegram, 0),
    Rule("raw", DOT, r"[A-Za-z0-9_-](?<=\.[A-Za-z0-9_-]{6}\..)[A-Za-z0-9_-]{26,37}(?![A-Za-z0-9_-])",
         tokens.discord, 0),
    Rule("raw", COLON, r"//hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9+/_-]{20,120}+)",
         _inner("slack_webhook"), 0),
    Rule("raw", COLON, r"//(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/(?P<v>\d{17,20}/[A-Za-z0-9_-]{60,80}+)",
         _inner("discord_webhook"), 0),
)
