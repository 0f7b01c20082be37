"""Health of the background vector task: its failures logged when they happen, the state each
server process records for `agent-memory stats`, and the `<index>.broken-*` directories that
repairs set aside (removed once the rebuild has caught up, or at once when the disk is full)."""

from __future__ import annotations

import json
import os
import shutil
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from agent_memory.storage.failures import EXPLANATIONS, failure_detail, failure_reason, storage_reason
from agent_memory.storage.files import private_dir

log = structlog.get_logger("agent_memory.vectors")

STEPS = {"load": "opening the vector index", "check": "checking the vector index",
         "repair": "rebuilding the vector index from SQLite", "apply": "applying changes to the vector index"}
_STATUS_BYTES = 2048  # status files are rewritten in place at this size: no new disk blocks needed


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def problem_text(step: str, exc: BaseException) -> str:
    """What `degraded` says while a step keeps failing (a stable reason, no internal text)."""
    reason = storage_reason(exc)
    why = f"{reason}: {EXPLANATIONS[reason]}" if reason else type(exc).__name__
    return f"semantic search unavailable: {STEPS.get(step, step)} failed ({why}); retrying"


class TaskHealth:
    """The vector task's state in this process. Failures are logged at ERROR when they start or
    change reason, then at WARNING on attempts 2, 4, 8, ... (so a long outage stays readable),
    and recovery at INFO. The state is kept in `<index>.status/<pid>.json` for `stats`."""

    def __init__(self, index_dir: Path | None) -> None:
        self._file = None if index_dir is None else status_dir(index_dir) / f"{os.getpid()}.json"
        self.state = "loading"
        self.owner = False
        self.step: str | None = None
        self.reason: str | None = None
        self.failures = 0
        self.since = _now()
        self.problem: str | None = None
        self._key: tuple[str, str] | None = None
        self._saved: dict[str, Any] | None = None

    def failed(self, step: str, exc: BaseException, retry_in: float, problem: str | None,
               event: str = "vector_sync_failed") -> None:
        reason = failure_reason(exc)
        self.failures += 1
        fields = {"step": step, "error": type(exc).__name__, "reason": reason, "detail": failure_detail(exc),
                  "attempt": self.failures, "retry_in": retry_in}
        if (step, reason) != self._key:
            log.error(event, **fields)
            self._key = (step, reason)
        elif self.failures & (self.failures - 1) == 0:  # 2, 4, 8, ...
            log.warning(event, **fields)
        else:
            log.info(event, **fields)
        if self.state != "failing":
            self.since = _now()
        self.state, self.step, self.reason, self.problem = "failing", step, reason, problem
        self.save()

    def settled(self, state: str, owner: bool, problem: str | None = None) -> None:
        """A pass of the task succeeded: `state` is loading, ready, following or rebuilding."""
        if self.failures:
            log.info("vector_sync_recovered", after_attempts=self.failures, step=self.step, reason=self.reason)
        self.failures, self._key, self.step, self.reason = 0, None, None, None
        if state != self.state:
            self.since = _now()
        self.state, self.owner, self.problem = state, owner, problem
        self.save()

    def stopped(self, reason: str, problem: str) -> None:
        self.state, self.reason, self.problem, self.since = "stopped", reason, problem, _now()
        self.save()

    def save(self) -> None:
        """Best effort, and in place (a full disk still takes it)."""
        if self._file is None:
            return
        data = {"pid": os.getpid(), "state": self.state, "owns_index": self.owner, "step": self.step,
                "reason": self.reason, "failures": self.failures, "since": self.since, "problem": self.problem}
        if data == self._saved:
            return
        raw = json.dumps({**data, "updated_at": _now()}).encode()
        raw += b" " * max(0, _STATUS_BYTES - len(raw))
        try:
            private_dir(self._file.parent)
            fd = os.open(self._file, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                os.pwrite(fd, raw, 0)
                os.ftruncate(fd, len(raw))
            finally:
                os.close(fd)
            self._saved = data
        except OSError:
            pass  # tried again at the next change

    def remove(self) -> None:
        if self._file is not None:
            with suppress(OSError):
                self._file.unlink()


def status_dir(index_dir: Path) -> Path:
    return index_dir.with_name(index_dir.name + ".status")


def set_aside_dirs(index_dir: Path) -> list[Path]:
    prefix = index_dir.name + ".broken-"
    try:
        return sorted(p for p in index_dir.parent.iterdir() if p.name.startswith(prefix) and p.is_dir())
    except OSError:
        return []


def remove_set_aside(index_dir: Path) -> int:
    """Delete every set-aside copy of the index (never needed: SQLite holds the truth). Returns
    how many went; never raises."""
    removed = 0
    for path in set_aside_dirs(index_dir):
        shutil.rmtree(path, ignore_errors=True)
        removed += not path.exists()
    return removed


def _bytes(path: Path) -> int:
    with suppress(OSError):
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def task_status(index_dir: Path) -> dict[str, Any]:
    """For `agent-memory stats`: the vector task of each running server process on this index
    (files of processes that are gone are removed), and the set-aside directories."""
    processes: list[dict[str, Any]] = []
    folder = status_dir(index_dir)
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if not path.stem.isdigit() or not _alive(int(path.stem)):
            with suppress(OSError):
                path.unlink()
            continue
        with suppress(OSError, ValueError):
            processes.append(json.loads(path.read_text()))
    return {"processes": processes,
            "set_aside": [{"path": str(p), "bytes": _bytes(p)} for p in set_aside_dirs(index_dir)]}
