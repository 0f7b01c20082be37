"""What the hook helper keeps on disk between events: how far each session's transcript has been
logged (`Offsets`), and capture a team's server did not take yet (`Pending`)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import secrets
import time
from pathlib import Path
from typing import Any


class Offsets:
    """How far each session's transcript has been read, in a small file per session that
    survives restarts; one lock per session orders concurrent capture events."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    def _file(self, key: str) -> Path:
        return self._dir / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"

    def get(self, key: str) -> int:
        try:
            data = json.loads(self._file(key).read_text())
            return int(data["offset"]) if data.get("key") == key else 0
        except (OSError, ValueError, KeyError, TypeError):
            return 0

    def put(self, key: str, offset: int) -> None:
        self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        target = self._file(key)
        part = target.with_suffix(f".{os.getpid()}.part")
        part.write_text(json.dumps({"key": key, "offset": offset}))
        os.replace(part, target)


class Pending:
    """Capture a team's server did not take, kept to send later: one private file each (it may
    hold the turns themselves), named by when it was kept."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory

    def keep(self, work: dict[str, Any]) -> None:
        self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        name = f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}.json"
        fd = os.open(self._dir / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(work, out)

    def any(self) -> bool:
        return self._dir.is_dir() and any(self._dir.glob("*.json"))

    def oldest_first(self) -> list[tuple[Path, dict[str, Any]]]:
        found = []
        for path in sorted(self._dir.glob("*.json")) if self._dir.is_dir() else []:
            try:
                work = json.loads(path.read_text())
            except (OSError, ValueError):
                work = None
            if isinstance(work, dict) and "session" in work and "home" in work:
                found.append((path, work))
            else:
                self.done(path)
        return found

    def done(self, path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()
