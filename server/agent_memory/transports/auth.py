"""The token signing secret: `MEMORY_AUTH_SECRET`, else a file in the data directory."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from agent_memory.config import ConfigError, Settings
from agent_memory.storage.files import private_dir

SECRET_FILE = "auth_secret"
MIN_SECRET_CHARS = 16


def secret_path(settings: Settings) -> Path:
    return settings.data_path / SECRET_FILE


def load_secret(settings: Settings) -> bytes:
    """The signing secret, creating `<data_dir>/auth_secret` (mode 0600) on first use.

    Creation is atomic (written to a private temporary file, then hard-linked into place), so
    processes starting together agree on one secret.

    Raises:
        ConfigError: the configured secret is too short, or the file is unreadable or empty.
    """
    if settings.auth_secret:
        if len(settings.auth_secret) < MIN_SECRET_CHARS:
            raise ConfigError(f"invalid setting auth_secret (MEMORY_AUTH_SECRET): use at least "
                              f"{MIN_SECRET_CHARS} characters")
        return settings.auth_secret.encode()
    path = secret_path(settings)
    if not path.exists():
        try:
            _create_secret(path)
        except OSError as exc:
            raise ConfigError(f"cannot create the auth secret file {path}: {exc.strerror or exc}") from None
    try:
        text = path.read_text().strip()
    except OSError as exc:
        raise ConfigError(f"cannot read the auth secret file {path}: {exc.strerror}") from None
    if len(text) < MIN_SECRET_CHARS:
        raise ConfigError(f"the auth secret file {path} is empty or too short; delete it to create a new one")
    return text.encode()


def _create_secret(path: Path) -> None:
    """A new random secret at `path`, readable by its owner only; another process may win the race."""
    private_dir(path.parent)  # the data directory: 0700 when made here
    temporary = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32) + "\n")
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process won the race; use its secret
    finally:
        temporary.unlink(missing_ok=True)
