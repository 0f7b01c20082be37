"""How each setting's value is read: the parsers the `Settings` fields name (each raises
ValueError with what it accepts), the field maker with a setting's help and flags, and the error
and variable name a bad value is reported with."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any

ENV_PREFIX = "MEMORY_"


class ConfigError(ValueError):
    """An invalid setting; the message names it."""


def env_name(name: str) -> str:
    return ENV_PREFIX + name.upper()


def choice(*allowed: str) -> Callable[[object], str]:
    def parse(value: object) -> str:
        text = str(value).strip().lower()
        if text not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return text

    return parse


def int_between(low: int, high: int) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if isinstance(value, bool):
            raise ValueError("must be an integer")
        try:
            number = int(str(value).strip())
        except ValueError:
            raise ValueError(f"must be an integer between {low} and {high}") from None
        if not low <= number <= high:
            raise ValueError(f"must be an integer between {low} and {high}")
        return number

    return parse


def float_between(low: float, high: float) -> Callable[[object], float]:
    def parse(value: object) -> float:
        if isinstance(value, bool):
            raise ValueError("must be a number")
        try:
            number = float(str(value).strip())
        except ValueError:
            raise ValueError(f"must be a number between {low:g} and {high:g}") from None
        if not low <= number <= high:
            raise ValueError(f"must be a number between {low:g} and {high:g}")
        return number

    return parse


def boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError("must be true or false (1/0)")


def text(value: object) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value).strip()


def postgres_url(value: object) -> str:
    text = str(value).strip()
    if text and not text.startswith(("postgresql://", "postgres://")):
        raise ValueError("must be a libpq URL starting with postgresql://")
    return text


def http_url(value: object) -> str:
    """Empty, or an http(s) URL with a host (a team server's MCP endpoint)."""
    url = str(value).strip()
    if not url:
        return ""
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in ("http", "https") or not rest or rest.startswith("/") or any(c.isspace() for c in url):
        raise ValueError("must be an http:// or https:// URL with a host, e.g. http://memory.internal:8765/mcp")
    return url


def model_url(value: object) -> str:
    """Empty, or an http(s) URL with a host and no credentials (a model's API; its key is a
    setting of its own, never part of a URL that may be shown)."""
    url = str(value).strip()
    if not url:
        return ""
    scheme, _, rest = url.partition("://")
    authority = rest.split("/", 1)[0]
    if scheme.lower() not in ("http", "https") or not authority or any(c.isspace() for c in url):
        raise ValueError("must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:11434/v1")
    if "@" in authority:
        raise ValueError("must not hold a user or password: put the key in distill_key_file or MEMORY_DISTILL_KEY")
    return url


def private_file_text(path: str) -> str:
    """The one line of text in a file only its owner may read or write (a key).

    Raises:
        ValueError: saying why the file is not usable."""
    path = os.path.expanduser(path)
    try:
        found = os.stat(path)
    except OSError as exc:
        raise ValueError(f"the file {path} cannot be read ({exc.strerror or 'no such file'})") from None
    if not stat.S_ISREG(found.st_mode):
        raise ValueError(f"the file {path} is not a regular file")
    if found.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ValueError(f"the file {path} may be read by others: chmod 600 {path}")
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        raise ValueError(f"the file {path} cannot be read as text") from None
    if not text or any(c.isspace() for c in text):
        raise ValueError(f"the file {path} does not hold one key")
    return text


def setting(default: Any, parse: Callable[[object], Any], help: str, *, flag: bool = True,
             aliases: tuple[str, ...] = (), secret: bool = False) -> Any:
    """A setting: `flag=False` keeps it off the command line (secrets); `aliases` are extra flags."""
    return field(default=default, repr=not secret,
                 metadata={"parse": parse, "help": help, "flag": flag, "aliases": aliases})
