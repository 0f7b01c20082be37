"""The composition root: the only place that constructs connections, adapters and services (the
record stores' adapters in `agent_memory.stores`, for either backend; the services here, the same
for both)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from agent_memory.application import Application
from agent_memory.application.inspection import store_stats
from agent_memory.application.jobs import BackgroundJobs
from agent_memory.application.lineage import Lineage
from agent_memory.application.memories import Memories
from agent_memory.application.recall import Recall
from agent_memory.application.sessions import Sessions
from agent_memory.application.tokens import Tokens
from agent_memory.config import Settings
from agent_memory.contracts.errors import storage_failure
from agent_memory.core.access.ratelimit import RateLimiter
from agent_memory.core.access.visibility import Area
from agent_memory.core.memories.browse import BrowseService
from agent_memory.core.memories.crud import CrudService
from agent_memory.core.memories.lineage import LineageService
from agent_memory.core.memories.pruning import PruneService, Retention
from agent_memory.core.memories.secrets import Redactor
from agent_memory.core.model.clock import utc_now
from agent_memory.core.model.cursor import CursorCodec
from agent_memory.core.model.metrics import Metrics
from agent_memory.core.model.models import Caller, Layer
from agent_memory.core.model.rules import Limits
from agent_memory.core.ports import Distiller, EntryRepository, Keeper, OperatorStore, SessionStore
from agent_memory.core.ports.failures import FailureReader
from agent_memory.core.recall.budget import shares_of
from agent_memory.core.recall.ranking import RankWeights
from agent_memory.core.recall.retrieval import RetrievalDefaults, RetrievalService, RetrievalSettings
from agent_memory.core.sessions.keeping import KeepLimits, SessionKeeper
from agent_memory.core.sessions.reflection import ReflectionService
from agent_memory.core.sessions.turns import SessionLimits, SessionService
from agent_memory.distillers.chat_model import ChatModel, ChatModelDistiller
from agent_memory.storage.audit_buffer import BufferedAuditLog
from agent_memory.storage.failures import FAILURES
from agent_memory.stores import RecordStore, Vectors, open_store

log = structlog.get_logger("agent_memory.jobs")


@dataclass(frozen=True)
class App:
    settings: Settings
    launch_caller: Caller
    store: RecordStore  # the opened record store (SQLite or PostgreSQL) and its adapters
    audit: BufferedAuditLog
    crud: CrudService
    retrieval: RetrievalService
    vectors: Vectors | None
    rate_limiter: RateLimiter
    sessions: SessionService
    reflection: ReflectionService
    pruner: PruneService
    jobs: BackgroundJobs
    metrics: Metrics
    browse: BrowseService  # the memory console's list across every readable area
    operator: OperatorStore  # what stats, the audit trail and the console's metrics read
    lineage: LineageService  # supersede chains: what a fact replaced, and undoing a supersede
    door: Application  # the use cases every adapter calls (application/): the core services above are theirs
    failures: FailureReader  # what the store's failures mean (a full disk, a busy database), for the adapters
    # Starts the vector runtime's background load (model, index) when `open_app` was told to defer
    # it; idempotent, and a no-op otherwise.
    start_vectors: Callable[[], None] = lambda: None

    async def stats(self, areas: tuple[Area, ...] | None = None) -> dict[str, Any]:
        """This store's statistics (`application.inspection.store_stats`): with `areas`, only the entries
        one caller may read, without sizes; handed to the MCP resources and the console, so neither
        imports operator code."""
        return await store_stats(self.operator, chroma_dir=local_vector_dir(self.settings), areas=areas)

    def tokens(self, secret: bytes) -> Tokens:
        """Bearer tokens signed with `secret` (the transport's), recorded in this store."""
        return Tokens(self.store.tokens, secret)


@dataclass(frozen=True)
class Records:
    """The record store opened (and migrated) for an operator command, with its adapters."""

    settings: Settings
    store: RecordStore
    repo: EntryRepository  # writes (import), through the same transaction port as the tools
    operator: OperatorStore  # reads (export, stats, audit, erase's wait)
    redactor: Redactor  # `redact_secrets` as set (import redacts what it stores)
    failures: FailureReader = FAILURES  # what the store's failures mean (import tells its entries' from its own)

    @property
    def backend(self) -> str:
        return self.settings.backend

    def tokens(self, secret: bytes) -> Tokens:
        """Bearer tokens signed with `secret`, recorded in this store (`agent-memory token ...`)."""
        return Tokens(self.store.tokens, secret)

    def pruner(self, clock: Callable[[], datetime] = utc_now) -> PruneService:
        """The pruner with its keeper: a session's turns are distilled (by the local model when one
        is set) and digested, as their owner, before they are pruned (consolidation by wording:
        no embedding model is loaded here)."""
        store = self.store.sessions()
        # Only a refused authorization is audited here, and the keeper acts as each session's
        # owner in its own namespace: this log is never written to.
        sessions = SessionService(store, self.store.audit_log(), session_limits(self.settings), clock, self.redactor)
        reflection = ReflectionService(store, sessions, Limits(max_content_chars=self.settings.max_content_chars),
                                       clock, max_items=self.settings.reflection_max_items, redactor=self.redactor,
                                       model=local_model(self.settings))
        return pruning_service(self.settings, self.store, clock=clock,
                               keeper=session_keeper(self.settings, store, reflection, clock))

    def vectors(self) -> Vectors | None:
        """The vector runtime, not started (None when `vector_backend = "none"`)."""
        return self.store.vectors(server=False)


@asynccontextmanager
async def open_records(settings: Settings) -> AsyncIterator[Records]:
    """The record store of `settings`, migrated, for commands that work on it directly (no
    background work is started: a running server may own the vector index).

    Raises:
        ConfigError: the store cannot be used as configured (the message says why)."""
    async with open_store(settings) as store:
        yield Records(settings, store, store.entries(), store.operator, redaction(settings))


def redaction(settings: Settings) -> Redactor:
    """Secret redaction as `redact_secrets` says: the one place the setting is read and the one
    `Redactor` made, handed to every write path (crud, session log, reflection, import), none of
    which has a default of its own to fall back on."""
    return Redactor(settings.redact_secrets)


def local_model(settings: Settings) -> Distiller | None:
    """The local model reflection asks after the client's (`distill_url`), or None: opt-in, and
    nothing is sent anywhere unless it is set."""
    if not settings.distill_url:
        return None
    return ChatModelDistiller(ChatModel(settings.distill_url, settings.distill_model, settings.distill_key,
                                        settings.distill_timeout_seconds, settings.distill_transcript_chars))


def store_failures() -> FailureReader:
    """What the stores' failures mean, for an adapter that has no opened app to ask (a store
    that failed to open)."""
    return FAILURES


def local_vector_dir(settings: Settings) -> Path | None:
    """The Chroma directory on this machine, for sizes and the vector task's status (None: the
    vectors are elsewhere, in a Chroma server or in PostgreSQL)."""
    return None if settings.chroma_host or settings.backend == "postgres" else settings.chroma_dir


def rank_weights(settings: Settings) -> RankWeights:
    return RankWeights(
        keyword=settings.rank_weight_keyword, semantic=settings.rank_weight_semantic,
        name_boost=settings.rank_name_boost, neighbor=settings.rank_neighbor_weight,
        recency=settings.rank_weight_recency, priority=settings.rank_weight_priority,
        confidence=settings.rank_weight_confidence, scope=settings.rank_weight_scope,
        recency_half_life_days=settings.recency_half_life_days,
    )


def retrieval_defaults(settings: Settings) -> RetrievalDefaults:
    """What a memory_retrieve request leaves out gets these."""
    return RetrievalDefaults(
        limit=settings.retrieval_limit, max_chars=settings.injection_max_chars,
        per_entry_max_chars=settings.injection_per_entry_max_chars, min_score=settings.retrieval_min_score,
        relative_floor=settings.retrieval_relative_floor, budget_shares=shares_of(settings.retrieval_budget_shares))


def session_limits(settings: Settings) -> SessionLimits:
    return SessionLimits(logging=settings.session_logging, turn_max_chars=settings.session_log_max_chars,
                         compaction_threshold_chars=settings.compaction_threshold_chars,
                         keep_recent=settings.compaction_keep_recent,
                         summary_max_chars=settings.compaction_summary_max_chars,
                         chunk_turns=settings.compaction_chunk_turns,
                         chunk_gap_seconds=settings.compaction_chunk_gap_minutes * 60)


def session_keeper(settings: Settings, store: SessionStore, reflection: ReflectionService,
                   clock: Callable[[], datetime] = utc_now) -> SessionKeeper:
    """What keeps a session before its turns are pruned; a session it cannot keep is a warning
    (`agent-memory warnings`), and its turns stay."""
    return SessionKeeper(
        store, reflection,
        KeepLimits(digest_max_chars=min(settings.digest_max_chars, settings.max_content_chars),
                   chunk_turns=settings.digest_chunk_turns,
                   chunk_gap_seconds=settings.compaction_chunk_gap_minutes * 60),
        clock, on_failure=lambda session_id, reason: log.warning("session_not_kept", session_id=session_id,
                                                                 reason=reason, hint="its turns are not pruned"))


def pruning_service(settings: Settings, store: RecordStore, notify: Callable[[], None] | None = None,
                    clock: Callable[[], datetime] = utc_now, keeper: Keeper | None = None) -> PruneService:
    retention = Retention(
        max_entries_per_namespace=settings.max_entries_per_namespace,
        days={Layer.WORKING: settings.retention_working_days, Layer.SESSION: settings.retention_session_days,
              Layer.LONG_TERM: settings.retention_long_term_days, Layer.META: settings.retention_meta_days},
    )
    return PruneService(store.prune_store(notify), retention, clock, keeper)


@asynccontextmanager
async def open_app(settings: Settings, *, defer_vectors: bool = False) -> AsyncIterator[App]:
    """Open the store, apply migrations, start background work; close everything on exit.
    `defer_vectors`: leave the vector runtime's load (importing Chroma and ONNX Runtime, opening
    the index, loading the model: all of a core for about a second) to `App.start_vectors`, so
    that a stdio server answers its host's handshake first.

    Raises:
        ConfigError: the store cannot be used as configured (the message says why)."""
    launch_caller = settings.launch_caller()
    async with AsyncExitStack() as stack:
        store = await stack.enter_async_context(open_store(settings))
        secret = store.cursor_secret
        audit = store.audit_log()
        audit.start()
        stack.push_async_callback(audit.aclose)
        vectors = store.vectors(server=True)
        start_vectors, no_more = _once(vectors.start if vectors is not None else None)
        if vectors is not None:
            if not defer_vectors:
                start_vectors()
            stack.push_async_callback(vectors.aclose)
            stack.callback(no_more)  # closing: a deferred start that comes late does nothing
        limits = Limits(max_content_chars=settings.max_content_chars)
        redactor = redaction(settings)
        metrics = Metrics()
        notify = vectors.notify if vectors else None
        jobs = BackgroundJobs(reflection_interval=settings.reflection_interval_seconds,
                              prune_interval=settings.prune_interval_seconds)

        # Writers tell the pruner which namespaces grew.
        session_store = store.sessions(notify, jobs.inserted)
        sessions = SessionService(session_store, audit, session_limits(settings), utc_now, redactor)
        reflection = ReflectionService(
            session_store, sessions, limits, utc_now, max_items=settings.reflection_max_items,
            on_failure=lambda session_id, code: log.warning("background_reflection_failed", session_id=session_id,
                                                            code=code),
            meaning=store.meaning(vectors) if vectors else None, redactor=redactor, model=local_model(settings))
        retrieval = RetrievalService(
            store.retrieval_store(), vectors, audit,
            RetrievalSettings(candidate_depth=settings.retrieval_candidate_depth, weights=rank_weights(settings),
                              unknown_name_penalty=settings.retrieval_unknown_name_penalty,
                              inline_embed_max=settings.retrieval_inline_embed_max,
                              defaults=retrieval_defaults(settings)),
            utc_now, lineage=store.lineage(),
        )
        pruner = pruning_service(settings, store, notify, keeper=session_keeper(settings, session_store, reflection))
        jobs.start(reflection, pruner,
                   metrics=(lambda: {**metrics.snapshot(), "retrieval": retrieval.metrics.snapshot()})
                   if settings.metrics_log else None,
                   metrics_interval=settings.metrics_log_interval_seconds)
        stack.push_async_callback(jobs.aclose)
        repo = store.entries(notify, jobs.inserted)
        crud = CrudService(
            repo=repo,
            audit=audit,
            cursors=CursorCodec(bytes.fromhex(secret)),
            limits=limits,
            clock=utc_now,
            redactor=redactor,
        )
        browse = BrowseService(store.browse_store(), audit, CursorCodec(bytes.fromhex(secret)), utc_now)
        lineage = LineageService(repo, store.lineage(), audit, utc_now)
        chains = Lineage(lineage)
        yield App(settings=settings, launch_caller=launch_caller, store=store, audit=audit, crud=crud,
                  retrieval=retrieval, vectors=vectors,
                  rate_limiter=RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst),
                  sessions=sessions, reflection=reflection, pruner=pruner, jobs=jobs, metrics=metrics,
                  browse=browse, operator=store.operator, lineage=lineage,
                  door=Application(memories=Memories(crud, chains, browse,
                                                     lambda exc, rid: storage_failure(exc, rid, FAILURES)),
                                   recall=Recall(retrieval),
                                   sessions=Sessions(sessions, reflection), lineage=chains), failures=FAILURES,
                  start_vectors=start_vectors)


def _once(action: Callable[[], None] | None) -> tuple[Callable[[], None], Callable[[], None]]:
    """`action` as a callable that runs it the first time only, and a callable that disarms it."""
    done = action is None

    def run() -> None:
        nonlocal done
        if not done:
            done = True
            assert action is not None
            action()

    def disarm() -> None:
        nonlocal done
        done = True

    return run, disarm
