"""The composition root: the only place that constructs connections, adapters and services."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import datetime

import structlog

from agent_memory.config import ConfigError, Settings
from agent_memory.core.browse import BrowseService
from agent_memory.core.clock import utc_now
from agent_memory.core.crud import CrudService
from agent_memory.core.cursor import CursorCodec
from agent_memory.core.metrics import Metrics
from agent_memory.core.models import Caller, Layer
from agent_memory.core.pruning import PruneService, Retention
from agent_memory.core.ranking import RankWeights
from agent_memory.core.ratelimit import RateLimiter
from agent_memory.core.reflection import ReflectionService
from agent_memory.core.retrieval import RetrievalService, RetrievalSettings
from agent_memory.core.rules import Limits
from agent_memory.core.sessions import SessionLimits, SessionService
from agent_memory.jobs import BackgroundJobs
from agent_memory.storage.sqlite.audit import BufferedAuditLog
from agent_memory.storage.sqlite.browse import SqliteBrowseStore
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.entries import SqliteEntryRepository
from agent_memory.storage.sqlite.migrations import migrate, read_meta
from agent_memory.storage.sqlite.operator import SqliteOperatorStore
from agent_memory.storage.sqlite.pruning import SqlitePruneStore
from agent_memory.storage.sqlite.search import SqliteRetrievalStore
from agent_memory.storage.sqlite.sessions import SqliteSessionStore
from agent_memory.storage.vectors.chroma_index import ChromaIndex
from agent_memory.storage.vectors.embedder import ModelFiles, default_model_files
from agent_memory.storage.vectors.runtime import VectorRuntime
from agent_memory.storage.vectors.search import VectorMeaning

log = structlog.get_logger("agent_memory.jobs")


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
    sessions: SessionService
    reflection: ReflectionService
    pruner: PruneService
    jobs: BackgroundJobs
    metrics: Metrics
    browse: BrowseService  # the memory console's list across every readable area
    operator: SqliteOperatorStore  # what stats, the audit trail and the console's metrics read


@dataclass(frozen=True)
class Records:
    """The record store opened (and migrated) for an operator command, with its adapters."""

    db: Database
    repo: SqliteEntryRepository  # writes (import), through the same transaction port as the tools
    operator: SqliteOperatorStore  # reads (export, stats, audit, erase's wait)


def _refuse_unfinished(settings: Settings) -> None:
    if settings.backend == "postgres":  # its record adapters exist; search, vectors and sessions do not yet
        raise ConfigError("backend postgres is not complete yet: use sqlite")


@asynccontextmanager
async def open_records(settings: Settings) -> AsyncIterator[Records]:
    """The record store of `settings`, migrated, for commands that work on it directly (no
    background work is started: a running server may own the vector index)."""
    _refuse_unfinished(settings)
    db = Database(settings.sqlite_file, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    await db.open()
    try:
        await migrate(db)
        yield Records(db, SqliteEntryRepository(db), SqliteOperatorStore(db, settings.sqlite_file))
    finally:
        await db.close()


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
    def model_files() -> ModelFiles:
        return default_model_files(settings.embedding_model_dir, int8_compute=settings.embedding_int8_compute)

    return VectorRuntime(db, index, model_files, load_wait_seconds=settings.retrieval_load_wait_seconds)


def session_limits(settings: Settings) -> SessionLimits:
    return SessionLimits(logging=settings.session_logging, turn_max_chars=settings.session_log_max_chars,
                         compaction_threshold_chars=settings.compaction_threshold_chars,
                         keep_recent=settings.compaction_keep_recent,
                         summary_max_chars=settings.compaction_summary_max_chars,
                         chunk_turns=settings.compaction_chunk_turns,
                         chunk_gap_seconds=settings.compaction_chunk_gap_minutes * 60)


def pruning_service(settings: Settings, db: Database, notify: Callable[[], None] | None = None,
                    clock: Callable[[], datetime] = utc_now) -> PruneService:
    retention = Retention(
        max_entries_per_namespace=settings.max_entries_per_namespace,
        days={Layer.WORKING: settings.retention_working_days, Layer.SESSION: settings.retention_session_days,
              Layer.LONG_TERM: settings.retention_long_term_days, Layer.META: settings.retention_meta_days},
    )
    return PruneService(SqlitePruneStore(db, on_vector_change=notify), retention, clock)


@asynccontextmanager
async def open_app(settings: Settings) -> AsyncIterator[App]:
    """Open the store, apply migrations, start background work; close everything on exit."""
    _refuse_unfinished(settings)
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
            db.on_storage_full = vectors.free_space  # set-aside index copies are the first to go
            vectors.start()
            stack.push_async_callback(vectors.aclose)
        limits = Limits(max_content_chars=settings.max_content_chars)
        metrics = Metrics()
        notify = vectors.notify if vectors else None
        jobs = BackgroundJobs(pruning_service(settings, db, notify),
                              reflection_interval=settings.reflection_interval_seconds,
                              prune_interval=settings.prune_interval_seconds)

        # Writers tell the pruner which namespaces grew.
        session_store = SqliteSessionStore(db, on_vector_change=notify, on_insert=jobs.inserted)
        sessions = SessionService(session_store, audit, session_limits(settings), utc_now)
        reflection = ReflectionService(
            session_store, sessions, limits, utc_now, max_items=settings.reflection_max_items,
            on_failure=lambda session_id, code: log.warning("background_reflection_failed", session_id=session_id,
                                                            code=code),
            meaning=VectorMeaning(vectors) if vectors else None)
        retrieval = RetrievalService(
            SqliteRetrievalStore(db), vectors, audit,
            RetrievalSettings(candidate_depth=settings.retrieval_candidate_depth, weights=rank_weights(settings),
                              unknown_name_penalty=settings.retrieval_unknown_name_penalty,
                              inline_embed_max=settings.retrieval_inline_embed_max),
            utc_now,
        )
        jobs.start(reflection,
                   metrics=(lambda: {**metrics.snapshot(), "retrieval": retrieval.metrics.snapshot()})
                   if settings.metrics_log else None,
                   metrics_interval=settings.metrics_log_interval_seconds)
        stack.push_async_callback(jobs.aclose)
        crud = CrudService(
            repo=SqliteEntryRepository(db, on_vector_change=notify, on_insert=jobs.inserted),
            audit=audit,
            cursors=CursorCodec(bytes.fromhex(secret)),
            limits=limits,
            clock=utc_now,
        )
        yield App(settings=settings, launch_caller=launch_caller, db=db, audit=audit, crud=crud,
                  retrieval=retrieval, vectors=vectors,
                  rate_limiter=RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst),
                  sessions=sessions, reflection=reflection, pruner=jobs.pruner, jobs=jobs, metrics=metrics,
                  browse=BrowseService(SqliteBrowseStore(db), audit, CursorCodec(bytes.fromhex(secret)), utc_now),
                  operator=SqliteOperatorStore(db, settings.sqlite_file))
