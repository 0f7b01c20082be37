"""Operator commands that work on a data directory directly (not through MCP)."""

from __future__ import annotations

import sys
import time

from agent_memory.bootstrap import vector_runtime
from agent_memory.config import Settings
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.migrations import migrate


class OperationFailed(RuntimeError):
    """The command could not do its work; the message says why."""


async def reindex(settings: Settings) -> int:
    """Rebuild the vector index from SQLite, with progress on stderr. Returns entries indexed.

    Raises:
        OperationFailed: vectors are switched off, the model is unusable, or a running server
            owns the vector directory.
    """
    db = Database(settings.sqlite_file, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    await db.open()
    try:
        await migrate(db)
        runtime = vector_runtime(settings, db)
        if runtime is None:
            raise OperationFailed("vector_backend is none: there is no vector index to rebuild")
        try:
            try:
                await runtime.rebuild()
            except RuntimeError as exc:
                raise OperationFailed(f"{exc} (stop the server that owns it, then retry)") from None
            total = await runtime.backlog()
            done = 0
            started = time.monotonic()
            while (applied := await runtime.apply_pending()) > 0:
                done += applied
                rate = done / max(time.monotonic() - started, 1e-6)
                print(f"reindex: {done}/{total} ({rate:.0f}/s)", file=sys.stderr, flush=True)
            print(f"reindex: done, {done} vector changes applied", file=sys.stderr)
            return done
        finally:
            await runtime.aclose()
    finally:
        await db.close()
