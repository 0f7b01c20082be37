"""Whether a value found beside a name that says secret is one: the rules for a password, for a
random key or token, and for what is never a secret (a placeholder, a reference, a bind name)."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

# Every expression here runs in time linear in the value: no repetition holds another that can
# split the same characters two ways (`(?:[a-z]+-?)*` takes exponential time on `aaaa...!`).
# A value is a placeholder only when it IS one, whole: `<your-token>`, `${VAR}`, `changeme`,
# `xxxx`, `***`, `REDACTED`, `your_api_key_here`, `sk-...`, AWS's documented `...EXAMPLE`; never
# because it holds a common word (`Yourpass(2024)!` and `example-Gr8t-pw` are passwords).
# Matched on the value lowered (no re.I: a case-blind search cannot pass over an alternative by
# its first character, so it tries every one).
_PLACEHOLDER = re.compile(r"""
    <[^<>]{0,80}>                                   # <your-token>, <password>
  | \[[^\[\]]{0,40}\]                                # [REDACTED], [hidden]
  | \(?(?:redacted|hidden|masked|removed|filtered|omitted|elided|scrubbed)(?::[a-z_]+)?\)?
  | [*•·.…_x#-]{3,}                                  # ***, xxxx, XXXX-XXXX, ..., ###
  | (?:change|replace|update|fill|set|enter)[-_ ]?(?:me|it|this)(?:[-_ ]?(?:in|now|later|please|before[-_a-z]*))?
  | (?:your|my)[-_ ]?(?:[a-z]++(?:[-_ ][a-z]++){0,5}[-_ ]?)?  # your_api_key_here, YOUR-TOKEN, mytoken (words only)
  | (?:insert|put|paste|add)[-_ ](?:[a-z]++(?:[-_ ][a-z]++){0,11}[-_ ]?)?  # insert_key_here, PASTE-THE-OUTPUT-OF-...
  | (?:example|sample|dummy|placeholder|test|testing|todo|tbd|fixme|foo|bar|baz|foobar|none|null|nil
     |undefined|n/?a|empty|default|unset|secret|secrets|password|passwd|pass|pwd|token|apikey|api[-_]key|key
     |string|str|value|bytes|int|bool|any|optional|required|bearer|basic|env)
""", re.X)
# A prefix, then a filler (`sk-...`, `ghp_xxxx`, `sk-<key>`, `xoxb-your-token`), tried only on a
# value that holds a filler.
_FILLED = re.compile(r"[a-z0-9]{1,16}(?:[-_.][a-z0-9]{1,12}){0,3}"
                     r"(?:[-_.]?(?:\.{2,}|…|[x*•]{3,}|<[^<>]*>)|[-_.](?:your|my)[-_a-z]*)")
_FILLER = re.compile(r"\.\.|…|xxx|\*\*\*|•••|<|your|my")
_EXAMPLE = re.compile(r".{0,40}EXAMPLE(?:KEY)?")  # AWS's documented example keys
# References to a value kept elsewhere, and SQL bind names: not values.
_REFERENCE = re.compile(r"""
    \$\{.* | \$\(.* | \$[A-Z_][A-Z0-9_]* | \$[a-z_][a-z0-9_]*    # ${VAR}, $(cmd), $VAR
  | %[A-Za-z_]\w*% | \{\{.* | \{%.* | <%.* | \#\{.*              # %VAR%, {{ x }}, {% x %}, <%= x %>, #{x}
  | ![A-Za-z]+                                       # !vault, !Ref (a YAML tag)
  | [A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(.*\)|\[.*\])?  # settings.token, os.environ.get(...), process.env.X
  | [A-Za-z_][\w.]*+\s?\(.*\)(?:[.(\[].*)?              # getpass(...), urlsplit(u).password (not `Pass(1)word`)
  | [A-Za-z_][\w.]*\[.*\]                            # env["X"]
  | [A-Za-z_][\w.]*[(\[]                              # getpass.getpass( ... cut at a quote
  | [A-Za-z_][\w.]*\[[A-Za-z_"'].*                     # Optional[Dict[str, ...: a type, a subscript
  | [A-Za-z_][\w.]*\([A-Za-z_][\w.]*,?                 # HTTPBasicAuth(username, ... cut at a space
  | [(\[]+[A-Za-z_]\w*(?:[.(\[,:].*)? | \{.*          # (self.password..., [listener.fileno(), (bool, {attrs[2]}
  | [A-Za-z_][\w.]*\([A-Za-z_]\w*(?:[=,:.(\[\]]|\)\W).*  # httpx.Client(timeout=None, enforce_bytes(auth[1]
  | [\[(^].*[\])][+*?]?\$?                               # [-!#$%&'*+.^_`|~0-9a-zA-Z]+: a pattern
  | (?:%[sdr]|\{\d*\}|[:@/ ])+                           # '%s:%s', '{}:{}': a format, not a value
  | (?:file|env|vault|op|ssm|arn|secretsmanager|keyvault|awssm|gcpsm|ref|cmd):.*  # file:/path, env:VAR, op://...
  | [@:][a-z_]+ | %\(\w+\)s | \$\d+ | \?              # SQL binds: @password, :password, %(password)s, $1, ?
  | [~.]{0,2}/[\w.-]++(?:/[\w.-]++)*+/? | [A-Za-z]:\\.*  # paths
  | [\w.+-]+@[\w-]+\.[\w.-]+                          # an email address
  | [a-z][a-z0-9+.-]*://\S*                           # a URL
""", re.X)
# A reference holds one of these (a value without any, `glpat-12`, is not tried against them all).
_REFERENCE_MARK = re.compile(r"[$%{<#!.(\[^:@/?\\ ]")
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # DB_PASSWORD, the name of a setting
_TECH = re.compile(r"(?:argon2(?:id|i|d)?|bcrypt|scrypt|pbkdf2\w*|sha\d+\w*|md5|utf-?8|base64|oauth2?|https?2?|x509"
                   r"|pkcs\d+|aes-?\d*\w*|rsa-?\d*|ed25519|s3|ec2|k8s|v?\d+(?:\.\d+)+\w*|tls\d\w*|ssl\d?|2fa|mfa|totp"
                   r"|hotp|saml2?|ssh2?|ipv[46]|x86_64|arm64|amd64|py3\w*|es20\d\d|h2|grpc)", re.I)
_FILE = re.compile(r"[\w.-]+\.(?:py|ts|tsx|js|jsx|go|rs|rb|java|kt|c|h|cpp|cs|php|json|ya?ml|toml|ini|cfg|conf|txt|md"
                   r"|log|sh|sql|xml|html|css|lock|env|pem|crt|key|pub|gz|zip|tar)", re.I)
_ANY_DIGIT = re.compile(r"\d")
_DATE = re.compile(r"\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d")
_PASSPHRASE = re.compile(r"[A-Za-z]{2,}(?:([-_.])[A-Za-z]{2,})(?:\1[A-Za-z]{2,})+")
_HEX_RUN = re.compile(r"(?=[0-9a-f]{0,6}[0-9])[0-9a-f]{7,}")
_PIECES = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_VOWEL = re.compile(r"[aeiouy]", re.I)
NOT_VALUES = {"none", "null", "nil", "true", "false", "yes", "no", "on", "off", "required", "optional", "empty",
              "hidden", "masked", "unset", "default", "disabled", "enabled", "prompt", "stdin", "inherit", "auto",
              "the", "is", "in", "it", "and", "not", "see", "from", "with", "for", "was", "are", "set", "has"}
TRAILING = ".,;:'\"`"
_NEXT_NAME = re.compile(r"[&;,][ \t]*[A-Za-z_][\w.-]*=")
_STOPWORDS = {"the", "a", "an", "is", "be", "to", "of", "on", "in", "and", "or", "for", "must", "should", "will",
              "your", "with", "from", "at", "by", "this", "that", "it", "not", "no", "are", "was", "can", "here"}


def is_placeholder(value: str) -> bool:
    if len(set(value)) <= 2 or value.endswith(("EXAMPLE", "EXAMPLEKEY")) and _EXAMPLE.fullmatch(value):
        return True
    low = value.lower()
    return bool(_PLACEHOLDER.fullmatch(low) or _FILLER.search(low) and _FILLED.fullmatch(low))


def is_reference(value: str) -> bool:
    """A template, environment or code reference, a bind name, a path, an address: never a secret."""
    if value.endswith(("...", "…")) and "\n" not in value and len(value.rstrip(".…")) <= 200 and value.strip(".…"):
        return True  # eyJhbGciOi...: elided
    if _REFERENCE_MARK.search(value) and _REFERENCE.fullmatch(value):
        return True
    return bool(_CONSTANT.fullmatch(value)) and sum(c.isdigit() for c in value) < 2


def is_public(value: str) -> bool:
    """Keys made to be public: Mapbox `pk.`, Stripe `pk_live_`, Supabase publishable, age and SSH public keys."""
    return value.startswith(("pk.eyJ", "pk_live_", "pk_test_", "sb_publishable_", "age1", "ssh-rsa", "ssh-ed25519",
                             "ecdsa-sha2", "npub1"))


def not_a_value(value: str) -> bool:
    return value.lower() in NOT_VALUES or is_placeholder(value) or is_reference(value)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def wordish(value: str) -> bool:
    """Whether a value reads as words (`db-credentials`, `redis-auth`, `DbCredentialsSecret`)
    rather than random characters (`Bx0jEpja22orMmNy`)."""
    pieces = _PIECES.findall(value)
    letters = [p for p in pieces if p.isalpha()]
    if not letters or sum(len(p) for p in pieces if p.isdigit()) > 4 or any(len(p) > 14 for p in letters):
        return False
    return sum(map(len, letters)) / len(letters) >= 4 and all(_VOWEL.search(p) for p in letters if len(p) > 4)


def classes(value: str) -> tuple[bool, bool, bool, bool]:
    """(lower, upper, digit, symbol) present."""
    return value.upper() != value, value.lower() != value, _ANY_DIGIT.search(value) is not None, not value.isalnum()


def random_looking(value: str, min_len: int = 16) -> bool:
    """The entropy check for a value a name says is a key, token or secret: long enough, random
    enough, not words, a reference or a placeholder."""
    if len(value) < 10 or " " in value:
        return False
    lower, upper, digit, symbol = classes(value)
    if not (digit or lower and upper) or len(value) < min_len and lower + upper + digit + symbol < 3:
        return False
    if not_a_value(value) or wordish(value) or _DATE.search(value):
        return False
    return entropy(value) >= 3.0


def password_value(value: str, form: str, quoted: bool = False) -> bool:
    """Whether `value`, beside a name or word that says password, is one. `form` is how it was
    given: `assign` (`password=`, `--password`), `said` (`the password is`), `bare` (`password X`)."""
    if not 4 <= len(value) <= 256 or value.startswith("-") or value.isdigit() and len(value) < 6:
        return False  # too short or long, a flag, a PIN-sized number
    lower, upper, digit, symbol = classes(value)
    if form == "assign":
        if not (quoted or digit or symbol or lower and upper):
            return False
    else:  # said in prose: more than a word (the cheap tests first)
        if len(value) < 6 or not (lower or upper) or _TECH.fullmatch(value) or _FILE.fullmatch(value):
            return False
        if _DATE.search(value) or not upper and _HEX_RUN.search(value) and len(value) < 32:
            return False  # a timestamp, a commit or a pod's hash in prose
        if not digit and not (form == "said" and (_PASSPHRASE.fullmatch(value) or symbol and lower and upper
                                                  and not wordish(value))):
            return False  # a passphrase: three words or more, joined (`purple-monkey-dishwasher`)
    # Not a placeholder, a reference, a public key, a sentence (`"must be changed on first login"`).
    return not (not_a_value(value) or is_public(value) or " " in value and _STOPWORDS & set(value.lower().split()))


def human_secret(value: str) -> bool:
    """A secret a person chose (`JackalQuokka5!`): 8 to 64 characters of letters, digits and a
    symbol that no identifier holds (`parent_10` is a name), no path, address or reference."""
    lower, upper, digit, _ = classes(value)
    return (8 <= len(value) <= 64 and (lower or upper) and digit and not any(c in value for c in " /:@")
            and any(not c.isalnum() and c not in "_-." for c in value) and not not_a_value(value))


def basic_credentials(value: str) -> bool:
    """Whether a Basic value decodes to `user:password`."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and len(decoded) >= 3


def trim(value: str) -> str:
    """An unquoted value ends before the next `; name=` / `& name=` / `, name=` and loses trailing
    punctuation (a closing bracket only when it opens none)."""
    if "&" in value or ";" in value or "," in value:
        cut = _NEXT_NAME.search(value)
        if cut:
            value = value[: cut.start()]
    if value.endswith(("...", "…")):
        return value  # elided: kept whole, so that it reads as a placeholder
    while value:
        last = value[-1]
        if last in TRAILING or last in ")]}" and value.count(last) > value.count({")": "(", "]": "[", "}": "{"}[last]):
            value = value[:-1]
        else:
            break
    return value
