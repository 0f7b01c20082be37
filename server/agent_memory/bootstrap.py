"""The composition root: the only place that constructs connections, adapters and services."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from agent_memory.config import Settings
from agent_memory.core.clock import utc_now
from agent_memory.core.crud import CrudService
from agent_memory.core.cursor import CursorCodec
from agent_memory.core.models import Caller
from agent_memory.core.ratelimit import RateLimiter
from agent_memory.core.rules import Limits
from agent_memory.storage.sqlite.audit import BufferedAuditLog
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.entries import SqliteEntryRepository
from agent_memory.storage.sqlite.migrations import migrate, read_meta


@dataclass(frozen=True)
class App:
    settings: Settings
    launch_caller: Caller
    db: Database
    audit: BufferedAuditLog
    crud: CrudService
    rate_limiter: RateLimiter


@asynccontextmanager
async def open_app(settings: Settings) -> AsyncIterator[App]:
    """Open the store, apply migrations, start background work; close everything on exit."""
    launch_caller = settings.launch_caller()
    db = Database(settings.sqlite_file, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    await db.open()
    try:
        await migrate(db)
        secret = await read_meta(db, "cursor_secret")
        if secret is None:
            raise RuntimeError("cursor secret missing from server_meta")
        audit = BufferedAuditLog(db)
        audit.start()
        crud = CrudService(
            repo=SqliteEntryRepository(db),
            audit=audit,
            cursors=CursorCodec(bytes.fromhex(secret)),
            limits=Limits(max_content_chars=settings.max_content_chars),
            clock=utc_now,
        )
        try:
            yield App(settings=settings, launch_caller=launch_caller, db=db, audit=audit, crud=crud,
                      rate_limiter=RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst))
        finally:
            await audit.aclose()
    finally:
        await db.close()
