"""Names that say what they hold: `DB_PASSWORD` a password, `x-api-key` a key, `sessionid` a
session, `existingSecret` or `password_min_length` nothing secret."""

from __future__ import annotations

import re
from functools import lru_cache

_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
PASSWORD = {"password", "passwd", "pwd", "pass", "passphrase", "passcode", "pw", "pword", "pswd", "passw"}
TOKEN = {"token", "apikey", "authtoken", "accesstoken", "credential", "credentials", "creds", "auth", "bearer"}
SECRET = {"secret", "secretkey", "privatekey", "accesskey", "apisecret", "clientsecret"}
SESSION = {"sessionid", "sessid", "phpsessid", "jsessionid", "sid", "session"}
# The last two words.
PAIRS = {("api", "key"), ("access", "key"), ("secret", "key"), ("private", "key"), ("account", "key"),
         ("subscription", "key"), ("auth", "key"), ("master", "key"), ("signing", "key"), ("encryption", "key"),
         ("app", "key"), ("application", "key"), ("license", "key"), ("service", "key"), ("sas", "key"),
         ("shared", "key"), ("storage", "key"), ("hmac", "key"), ("admin", "key"), ("key", "base"),
         ("client", "secret"), ("app", "secret"), ("webhook", "secret"), ("session", "key"), ("connection", "key"),
         ("primary", "key"), ("secondary", "key")}
# A last word that says the name holds something about a secret, not the secret.
NOT_SECRET = {"existing", "ref", "reference", "name", "names", "file", "path", "arn", "url", "uri", "env", "var",
              "field", "header", "type", "length", "len", "min", "max", "count", "ttl", "expiry", "expires", "expire",
              "expiration", "prefix", "suffix", "policy", "rotation", "hash", "hashed", "digest", "mode", "required",
              "enabled", "enable", "manager", "provider", "source", "format", "pattern", "regex", "hint", "label",
              "placeholder", "description", "help", "reset", "timeout", "limit", "size", "usage", "param", "kind",
              "version", "algorithm", "algo", "method", "endpoint", "location", "dir", "template", "strength", "id",
              "ids", "stdin", "prompt", "selector", "column", "index", "schema", "tokens", "keys", "secrets",
              "passwords", "fingerprint", "lifetime", "store", "vault", "backend", "class", "cookie", "flag", "salt",
              "iterations", "rounds", "cost", "input", "confirmation", "validator", "changed", "at", "date",
              "day", "days", "valid", "status", "set", "sent", "used", "error", "errors", "message", "text", "title"}
_NEVER = {"existing", "public", "publishable", "pub"}
_SPECIAL = {"asp.net_sessionid": "session", "private_key_id": "secret", "connect.sid": "session"}
_NOT_GLUED = ("bypass", "compass", "surpass", "overpass", "underpass", "trespass", "sshpass", "htpasswd")


def name_words(name: str) -> list[str]:
    return [w.lower().rstrip("0123456789") or w.lower() for part in re.split(r"[^A-Za-z0-9]+", name)
            for w in _CAMEL.findall(part)]


@lru_cache(maxsize=4096)
def name_class(name: str) -> str | None:
    """`password`, `token`, `secret`, `session`, `sas`, or None when the name says nothing secret."""
    low = name.lower().strip("-_.$'\"[]")
    if low in _SPECIAL:
        return _SPECIAL[low]
    if low == "sig" or low.endswith("signature") and low[-10:-9] in ("", "-", "_", "."):
        return "sas"  # a signed URL's signature (`sig=`, `X-Amz-Signature=`): judged only in a query
    if "csrf" in low or "xsrf" in low:
        return None  # a CSRF token is no credential: every page of the site holds it, alone it opens nothing
    words = name_words(name)
    if not words or _NEVER & set(words) or words[-1] in NOT_SECRET:
        return None
    last = words[-1]
    if last == "pass" and len(words) > 1 and words[-2] in ("to", "by", "can", "must", "should", "will", "and", "or"):
        return None  # fds_to_pass: the verb
    if last in PASSWORD or last.endswith(("password", "passwd")) and last not in _NOT_GLUED:
        return "password"
    if (name.isupper() or name.startswith("-")) and last.endswith(("pass", "pwd")) and last not in _NOT_GLUED:
        return "password"  # PGPASS, MYSQL_PWD, DBPASS, keytool -storepass, -keypass
    if tuple(words[-2:]) in PAIRS or last in SECRET:
        return "secret"
    if last in TOKEN or last.endswith("token"):
        return "token"
    if last in SESSION and (last != "sid" or len(words) == 1) or last.endswith("sessionid"):
        return "session"
    return None


def secret_name(name: str) -> bool:
    """Whether an assigned name says it holds a secret: `DB_PASSWORD`, `SecretAccessKey`, `x-api-key`
    (not `password_min_length`, `max_tokens`, `api_key_header`, `bypass`)."""
    return name_class(name) is not None


def kind_of(name: str, cls: str) -> str:
    """The marker's kind for a value of this name and class."""
    if cls in ("password", "token"):
        return cls
    if cls == "session":
        return "session_cookie"
    if cls == "sas":
        return "azure_sas"
    return "api_key" if "key" in name_words(name) or "apikey" in name.lower() else "secret"
