"""One owner of a local vector directory: Chroma's PersistentClient is not safe for two processes
on one directory (it silently loses vectors), so exactly one process owns it, by an exclusive lock
on `<path>.lock` taken before the directory is created or opened and held until close."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from agent_memory.storage.files import private_dir


class OwnedElsewhere(RuntimeError):
    """Another process owns the vector directory; this one leaves its changes in the outbox."""


def take_lock(path: Path) -> int:
    """The lock's file descriptor (closing it releases the lock), with this process's pid in the
    file. Raises: OwnedElsewhere (naming the owner's pid), OSError."""
    private_dir(path.parent)
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise OwnedElsewhere(f"another process (pid {owner}) owns the vector index") from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
    except OSError:
        os.close(fd)  # (a full disk) never keep a lock nobody knows of
        raise
    return fd
