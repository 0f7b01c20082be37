"""The composition root: the only place that constructs connections, adapters and services."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from agent_memory.config import Settings
from agent_memory.core.clock import utc_now
from agent_memory.core.crud import CrudService
from agent_memory.core.cursor import CursorCodec
from agent_memory.core.models import Caller
from agent_memory.core.ranking import RankWeights
from agent_memory.core.ratelimit import RateLimiter
from agent_memory.core.retrieval import RetrievalService, RetrievalSettings
from agent_memory.core.rules import Limits
from agent_memory.storage.sqlite.audit import BufferedAuditLog
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.entries import SqliteEntryRepository
from agent_memory.storage.sqlite.migrations import migrate, read_meta
from agent_memory.storage.sqlite.search import SqliteRetrievalStore
from agent_memory.storage.vectors.chroma_index import ChromaIndex
from agent_memory.storage.vectors.embedder import default_model_files
from agent_memory.storage.vectors.runtime import VectorRuntime


@dataclass(frozen=True)
class App:
    settings: Settings
    launch_caller: Caller
    db: Database
    audit: BufferedAuditLog
    crud: CrudService
    retrieval: RetrievalService
    vectors: VectorRuntime | None
    rate_limiter: RateLimiter


def rank_weights(settings: Settings) -> RankWeights:
    return RankWeights(
        keyword=settings.rank_weight_keyword, semantic=settings.rank_weight_semantic,
        name_boost=settings.rank_name_boost, neighbor=settings.rank_neighbor_weight,
        recency=settings.rank_weight_recency, priority=settings.rank_weight_priority,
        confidence=settings.rank_weight_confidence, scope=settings.rank_weight_scope,
        recency_half_life_days=settings.recency_half_life_days,
    )


def vector_runtime(settings: Settings, db: Database) -> VectorRuntime | None:
    if settings.vector_backend == "none":
        return None
    if settings.chroma_host:
        index = ChromaIndex(host=settings.chroma_host, port=settings.chroma_port, ssl=settings.chroma_ssl)
    elif settings.backend == "list":
        index = ChromaIndex(None)  # in memory, like the records
    else:
        index = ChromaIndex(settings.chroma_dir)
    return VectorRuntime(db, index, lambda: default_model_files(settings.embedding_model_dir))


@asynccontextmanager
async def open_app(settings: Settings) -> AsyncIterator[App]:
    """Open the store, apply migrations, start background work; close everything on exit."""
    launch_caller = settings.launch_caller()
    db = Database(settings.sqlite_file, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    await db.open()
    async with AsyncExitStack() as stack:
        stack.push_async_callback(db.close)
        await migrate(db)
        secret = await read_meta(db, "cursor_secret")
        if secret is None:
            raise RuntimeError("cursor secret missing from server_meta")
        audit = BufferedAuditLog(db)
        audit.start()
        stack.push_async_callback(audit.aclose)
        vectors = vector_runtime(settings, db)
        if vectors is not None:
            vectors.start()
            stack.push_async_callback(vectors.aclose)
        crud = CrudService(
            repo=SqliteEntryRepository(db, on_vector_change=vectors.notify if vectors else None),
            audit=audit,
            cursors=CursorCodec(bytes.fromhex(secret)),
            limits=Limits(max_content_chars=settings.max_content_chars),
            clock=utc_now,
        )
        retrieval = RetrievalService(
            SqliteRetrievalStore(db), vectors, audit,
            RetrievalSettings(candidate_depth=settings.retrieval_candidate_depth, weights=rank_weights(settings)),
            utc_now,
        )
        yield App(settings=settings, launch_caller=launch_caller, db=db, audit=audit, crud=crud,
                  retrieval=retrieval, vectors=vectors,
                  rate_limiter=RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst))
