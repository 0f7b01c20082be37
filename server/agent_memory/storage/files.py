"""The store's files are its owner's alone: every memory is in them, so no other local user may read
them, whatever the umask.

Directories this process creates (the data directory and any missing parents, the vector index,
the logs) are 0700 and files 0600, set by the mode given at creation and a chmod after it, never
by changing the process's umask (other threads create files meanwhile). SQLite creates a
database's -wal, -shm and -journal files itself with the database file's mode, so a database
created 0600 keeps them 0600. A store that already exists is never changed (its owner may share it
on purpose), but one that others can read is named in a warning when it is opened.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

import structlog

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_OTHERS_READ = stat.S_IRGRP | stat.S_IROTH

log = structlog.get_logger("agent_memory.storage")
_warned: set[str] = set()  # once per path and process (a server may open its store twice at start)


def private_dir(path: Path) -> None:
    """Create `path`, and each missing parent, with mode 0700 (as the XDG base directory spec asks
    of data directories); directories that exist are left as they are."""
    missing: list[Path] = []
    at = path
    while not os.path.lexists(at) and at.parent != at:
        missing.append(at)
        at = at.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR)
        except FileExistsError:
            continue  # another process made it meanwhile: theirs, as it is
        os.chmod(directory, PRIVATE_DIR)  # a umask that takes the owner's bits cannot lock us out


def create_private_file(path: Path) -> bool:
    """Create `path` empty with mode 0600 unless it exists (then it is left alone). True if created."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, PRIVATE_FILE)
    except FileExistsError:
        return False
    try:
        os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)
    return True


def make_private(path: Path) -> None:
    """Take group and other permissions away from `path` (a file, or a directory and everything in
    it) that this process has just created. Never raises: what vanished meanwhile is skipped."""
    try:
        if path.is_symlink():
            return
        if path.is_dir():
            os.chmod(path, PRIVATE_DIR)
            for child in path.iterdir():
                make_private(child)
        else:
            os.chmod(path, PRIVATE_FILE)
    except OSError:
        pass


def warn_if_shared(paths: Iterable[Path]) -> None:
    """Log one WARNING naming those of `paths` (existing files and directories of a store) that
    other local users can read. A sticky directory (/tmp) is shared by design: not named."""
    shared: list[str] = []
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if mode & _OTHERS_READ and not mode & stat.S_ISVTX and str(path) not in _warned:
            shared.append(f"{path} ({stat.filemode(mode)})")
            _warned.add(str(path))
    if shared:
        # Before the logs are set up (the console checks its store first), structlog would print
        # to stdout, which may be the MCP protocol's: stderr then, as configured logs go.
        logger = log if structlog.is_configured() else structlog.wrap_logger(structlog.PrintLogger(sys.stderr))
        logger.warning("store_readable_by_others", paths=shared,
                    fix="chmod go-rwx each of them (what the server creates is private already)")
