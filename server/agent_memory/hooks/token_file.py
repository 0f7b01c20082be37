"""The bearer token a developer's hooks (and the host's MCP entry) use for a team's server: kept in
a file only its owner may read, else in the MEMORY_HOOK_TOKEN variable. Standard library only: the
host runs `agent-memory token header` on every connection."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

ENV = "MEMORY_HOOK_TOKEN"


def private_problem(path: str) -> str | None:
    """Why the token file at `path` is not fit to hold a token (None: it is)."""
    try:
        found = os.stat(path)
    except OSError as exc:
        return f"the token file {path} cannot be read ({exc.strerror or exc.__class__.__name__})"
    if not stat.S_ISREG(found.st_mode):
        return f"the token file {path} is not a regular file"
    if found.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        return f"the token file {path} may be read by others: chmod 600 {path}"
    return None


def read(path: str, environ: Mapping[str, str]) -> str:
    """The token in `path`, else in the environment's MEMORY_HOOK_TOKEN.

    Raises:
        ValueError: saying why there is no usable token."""
    if not path:
        token = environ.get(ENV, "").strip()
        if not token:
            raise ValueError(f"hook_server_url is set but there is no token: set hook_token_file or {ENV}")
        return token
    if (problem := private_problem(path)) is not None:
        raise ValueError(problem)
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"the token file {path} cannot be read ({exc.__class__.__name__})") from None
    if not token or any(c.isspace() for c in token):
        raise ValueError(f"the token file {path} does not hold one token")
    return token
