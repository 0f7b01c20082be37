"""The composition root's record stores (with `bootstrap`, the only place adapters are built):
either store behind the same ports, chosen by `settings.backend`. SQLite (`"sqlite"`, a file, or
`"list"`, in memory) with Chroma for vectors; or PostgreSQL (`"postgres"`: entries, keyword index,
audit, outbox and pgvector in one database), whose adapters need the optional `postgres` extra and
are imported only when it is chosen. Everything above the adapters (services, background jobs,
tools, console, operator commands) is the same for both.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol

from agent_memory.config import ConfigError, Settings
from agent_memory.core.ports import (
    BrowseStore,
    EntryRepository,
    Meaning,
    OperatorStore,
    PruneStore,
    RetrievalStore,
    SemanticIndex,
    SessionStore,
    TokenRegistry,
)
from agent_memory.core.ports.lineage import LineageStore
from agent_memory.storage.audit_buffer import BufferedAuditLog
from agent_memory.storage.chroma.chroma_index import ChromaIndex
from agent_memory.storage.chroma.runtime import VectorRuntime
from agent_memory.storage.embedding.embedder import ModelFiles, default_model_files
from agent_memory.storage.embedding.queries import VectorMeaning
from agent_memory.storage.sqlite.audit import SqliteAuditLog
from agent_memory.storage.sqlite.browse import SqliteBrowseStore
from agent_memory.storage.sqlite.database import Database, SqliteUnavailable
from agent_memory.storage.sqlite.entries import SqliteEntryRepository
from agent_memory.storage.sqlite.migrations import migrate, read_meta
from agent_memory.storage.sqlite.operator import SqliteOperatorStore
from agent_memory.storage.sqlite.pruning import SqlitePruneStore
from agent_memory.storage.sqlite.search import SqliteRetrievalStore
from agent_memory.storage.sqlite.sessions import SqliteSessionStore
from agent_memory.storage.sqlite.tokens import SqliteTokenRegistry

POSTGRES_EXTRA = "from a clone of agent-memory: pip install '.[postgres]'"
Notify = Callable[[], None] | None
OnInsert = Callable[[set[tuple[str, str]]], None] | None


class Vectors(SemanticIndex, Protocol):
    """The vector runtime of either store (`VectorRuntime`: Chroma, `PgVectorRuntime`: pgvector):
    the semantic index, and the background work that keeps it in step with the records."""

    @property
    def problem(self) -> str | None: ...

    def start(self) -> None: ...

    async def aclose(self) -> None: ...

    def notify(self) -> None: ...

    async def backlog(self) -> int: ...

    async def apply_pending(self) -> int: ...

    async def rebuild(self) -> None: ...

    async def take_over(self) -> bool:
        """For operator commands: may this process apply the outbox (model loaded, no other owner)?"""
        ...

    async def apply_deletions(self) -> int | None:
        """For operator commands: apply only the queued vector deletions (no model needed); None
        when another process owns the index and applies them."""
        ...

    def owner_note(self) -> str: ...


class RecordStore(Protocol):
    """One opened record store: its adapters, built on one connection (pool)."""

    backend: str
    cursor_secret: str
    operator: OperatorStore
    tokens: TokenRegistry  # issued tokens and revocations, read on every HTTP request

    def audit_log(self) -> BufferedAuditLog: ...

    def entries(self, notify: Notify = None, on_insert: OnInsert = None) -> EntryRepository: ...

    def sessions(self, notify: Notify = None, on_insert: OnInsert = None) -> SessionStore: ...

    def prune_store(self, notify: Notify = None) -> PruneStore: ...

    def retrieval_store(self) -> RetrievalStore: ...

    def lineage(self) -> LineageStore: ...

    def browse_store(self) -> BrowseStore: ...

    def vectors(self, *, server: bool) -> Vectors | None:
        """The vector runtime (None when `vector_backend = "none"`); `server`: for a running server."""
        ...

    def meaning(self, vectors: Vectors) -> Meaning: ...


def _model_files(settings: Settings) -> Callable[[], ModelFiles]:
    def model_files() -> ModelFiles:
        return default_model_files(settings.embedding_model_dir, int8_compute=settings.embedding_int8_compute)

    return model_files


class SqliteStore:
    """SQLite (a file; `list`: in memory) and Chroma for vectors."""

    def __init__(self, settings: Settings, db: Database, secret: str) -> None:
        self.backend = settings.backend
        self.cursor_secret = secret
        self.db = db
        self.operator = SqliteOperatorStore(db, settings.sqlite_file)
        self.tokens = SqliteTokenRegistry(db)
        self._settings = settings

    def audit_log(self) -> BufferedAuditLog:
        return SqliteAuditLog(self.db)

    def entries(self, notify: Notify = None, on_insert: OnInsert = None) -> SqliteEntryRepository:
        return SqliteEntryRepository(self.db, on_vector_change=notify, on_insert=on_insert)

    def sessions(self, notify: Notify = None, on_insert: OnInsert = None) -> SqliteSessionStore:
        return SqliteSessionStore(self.db, on_vector_change=notify, on_insert=on_insert)

    def prune_store(self, notify: Notify = None) -> SqlitePruneStore:
        return SqlitePruneStore(self.db, on_vector_change=notify)

    def retrieval_store(self) -> SqliteRetrievalStore:
        return SqliteRetrievalStore(self.db)

    def lineage(self) -> SqliteEntryRepository:
        return SqliteEntryRepository(self.db)

    def browse_store(self) -> SqliteBrowseStore:
        return SqliteBrowseStore(self.db)

    def vectors(self, *, server: bool) -> VectorRuntime | None:
        settings = self._settings
        if settings.vector_backend == "none":
            return None
        # Exact search's mirrors pay off in a server; a command's process (a hook, the CLI) would
        # spend more loading one than its few queries save.
        exact_max = settings.vector_exact_max if server else 0
        if settings.chroma_host:
            index = ChromaIndex(host=settings.chroma_host, port=settings.chroma_port, ssl=settings.chroma_ssl)
        elif settings.backend == "list":
            index = ChromaIndex(None, exact_max=exact_max, exact_total=settings.vector_exact_total)  # in memory
        else:
            index = ChromaIndex(settings.chroma_dir, exact_max=exact_max, exact_total=settings.vector_exact_total)
        runtime = VectorRuntime(self.db, index, _model_files(settings),
                                load_wait_seconds=settings.retrieval_load_wait_seconds)
        runtime.inline_embedding(settings.retrieval_inline_embed_ms / 1000, settings.retrieval_inline_embed_max)
        if server:
            self.db.on_storage_full = runtime.free_space  # set-aside index copies are the first to go
        return runtime

    def meaning(self, vectors: Vectors) -> Meaning:
        assert isinstance(vectors, VectorRuntime)
        return VectorMeaning(vectors)


class PostgresStore:
    """PostgreSQL: entries, keyword index, audit, outbox and vectors (pgvector) in one database.
    The adapters' modules are imported here only (the `postgres` extra is optional)."""

    def __init__(self, settings: Settings, db: Any, secret: str) -> None:
        from agent_memory.storage.postgres.operator import PostgresOperatorStore
        from agent_memory.storage.postgres.tokens import PostgresTokenRegistry

        self.backend = settings.backend
        self.cursor_secret = secret
        self.db = db
        self.operator = PostgresOperatorStore(db)
        self.tokens = PostgresTokenRegistry(db)
        self._settings = settings

    def audit_log(self) -> BufferedAuditLog:
        from agent_memory.storage.postgres.audit import PostgresAuditLog

        return PostgresAuditLog(self.db)

    def entries(self, notify: Notify = None, on_insert: OnInsert = None) -> EntryRepository:
        from agent_memory.storage.postgres.entries import PostgresEntryRepository

        return PostgresEntryRepository(self.db, on_vector_change=notify, on_insert=on_insert)

    def sessions(self, notify: Notify = None, on_insert: OnInsert = None) -> SessionStore:
        from agent_memory.storage.postgres.sessions import PostgresSessionStore

        return PostgresSessionStore(self.db, on_vector_change=notify, on_insert=on_insert)

    def prune_store(self, notify: Notify = None) -> PruneStore:
        from agent_memory.storage.postgres.pruning import PostgresPruneStore

        return PostgresPruneStore(self.db, on_vector_change=notify)

    def lineage(self) -> LineageStore:
        from agent_memory.storage.postgres.entries import PostgresEntryRepository

        return PostgresEntryRepository(self.db)

    def retrieval_store(self) -> RetrievalStore:
        from agent_memory.storage.postgres.search import PostgresRetrievalStore

        return PostgresRetrievalStore(self.db)

    def browse_store(self) -> BrowseStore:
        from agent_memory.storage.postgres.browse import PostgresBrowseStore

        return PostgresBrowseStore(self.db)

    def vectors(self, *, server: bool) -> Vectors | None:
        if self._settings.vector_backend == "none":
            return None
        from agent_memory.storage.postgres.vectors import PgVectorRuntime

        runtime = PgVectorRuntime(self.db, _model_files(self._settings),
                                  load_wait_seconds=self._settings.retrieval_load_wait_seconds)
        runtime.inline_embedding(self._settings.retrieval_inline_embed_ms / 1000,
                                 self._settings.retrieval_inline_embed_max)
        return runtime

    def meaning(self, vectors: Vectors) -> Meaning:
        return VectorMeaning(vectors)  # type: ignore[arg-type]  # its `cosines` is all VectorMeaning calls


@asynccontextmanager
async def _open_postgres(settings: Settings) -> AsyncIterator[PostgresStore]:
    if importlib.util.find_spec("psycopg") is None or importlib.util.find_spec("psycopg_pool") is None:
        raise ConfigError(f"backend postgres needs the PostgreSQL driver: {POSTGRES_EXTRA}")
    from agent_memory.storage.postgres import migrations
    from agent_memory.storage.postgres.database import PostgresDatabase, PostgresUnavailable

    db = PostgresDatabase(settings.postgres_url, pool_size=settings.postgres_pool_size)
    try:
        await db.open()
    except PostgresUnavailable as exc:
        raise ConfigError(str(exc)) from None  # a message for the operator, not a traceback
    try:
        try:
            await migrations.migrate(db)
        except migrations.PostgresSetupError as exc:
            raise ConfigError(str(exc)) from None
        secret = await migrations.read_meta(db, "cursor_secret")
        if secret is None:
            raise RuntimeError("cursor secret missing from server_meta")
        yield PostgresStore(settings, db, secret)
    finally:
        await db.close()


@asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[RecordStore]:
    """The record store `settings.backend` names, opened and migrated; closed on exit.

    Raises:
        ConfigError: PostgreSQL chosen but not installed, unreachable, or lacking pgvector; the
            SQLite file cannot be opened (the message says which and what to do)."""
    if settings.backend == "postgres":
        async with _open_postgres(settings) as store:
            yield store
        return
    db = Database(settings.sqlite_file, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    try:
        await db.open()
    except SqliteUnavailable as exc:
        raise ConfigError(str(exc)) from None
    try:
        await migrate(db)
        secret = await read_meta(db, "cursor_secret")
        if secret is None:
            raise RuntimeError("cursor secret missing from server_meta")
        yield SqliteStore(settings, db, secret)
    finally:
        await db.close()


def store_log_fields(settings: Settings) -> dict[str, str]:
    """Where the records are, for the log line at start: the SQLite file, or the PostgreSQL URL
    without its password."""
    if settings.backend != "postgres":
        return {"sqlite": settings.sqlite_file}
    try:
        from agent_memory.storage.postgres.database import redacted_url
    except ImportError:  # the driver is missing: opening the store says so
        return {"postgres": "(driver not installed)"}
    return {"postgres": redacted_url(settings.postgres_url)}
