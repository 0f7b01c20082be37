"""Ordered schema migrations for PostgreSQL, each recorded in `schema_migrations` once applied.

The schema holds what SQLite's eleven migrations built (`agent_memory.storage.sqlite.migrations`),
in PostgreSQL's terms:
- `entries`: the same columns; `seq` plays SQLite's `rowid` (a storage position). Text that is
  compared or sorted (ids, namespaces, owners, teams, timestamps) is `COLLATE "C"`: byte order, so
  namespace ranges and ISO timestamps compare as on SQLite whatever the database's locale. Tags are
  a `text[]`; `conflict` and `compacted` are booleans.
- the keyword index: a generated `tsvector` of content and tags (English stemming, as SQLite's
  porter tokenizer) with a GIN index, instead of FTS5 and its triggers.
- `audit` (append-only, enforced by a trigger), `server_meta` (the cursor secret), `vector_outbox`,
  `partitions` (kept by a trigger), `reflection_marks`.
- `tokens` and `token_cutoffs` (011): issued tokens and revocations, as on SQLite (013).
- `entry_vectors`: pgvector `vector(384)` per entry with its partition, an HNSW index (cosine),
  gone with its entry; it replaces both Chroma and SQLite's float16 copy.
SQLite's 010 (four-digit years) repaired old rows and has no counterpart in a new store.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

import psycopg

from agent_memory.core.model.clock import format_ts, utc_now
from agent_memory.storage.key_slots import postgres_016_key_slots
from agent_memory.storage.postgres.database import PostgresDatabase
from agent_memory.storage.postgres.tokens import m011_tokens
from agent_memory.storage.postgres.turn_numbers import m008_turn_numbers
from agent_memory.storage.postgres.vectors_outbox import m009_vector_outbox_by_entry, m010_vector_outbox_vacuum
from agent_memory.storage.read_lists import postgres_015_read_lists

Migration = Callable[[psycopg.Connection], None]

EMBEDDING_DIMENSIONS = 384  # all-MiniLM-L6-v2
# Any constant shared by every agent-memory process: who holds it applies migrations, the others wait.
MIGRATION_LOCK = 0x616D_6D69_6772  # "ammigr"
PGVECTOR_MIN = (0, 5)  # HNSW indexes


class PostgresSetupError(RuntimeError):
    """The database lacks something only an operator can provide (the message says what)."""


def _m001_entries(conn: psycopg.Connection) -> None:
    conn.execute(
        """
        CREATE FUNCTION entry_search_vector(content text, tags text[]) RETURNS tsvector
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN to_tsvector('english'::regconfig, content)
            || to_tsvector('english'::regconfig, array_to_string(tags, ' '))
        """
    )
    conn.execute(
        """
        CREATE TABLE entries (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id TEXT COLLATE "C" NOT NULL UNIQUE,
            scope TEXT NOT NULL CHECK (scope IN ('agent', 'team', 'global')),
            namespace TEXT COLLATE "C" NOT NULL,
            team TEXT COLLATE "C",
            owner_agent_id TEXT COLLATE "C" NOT NULL,
            content TEXT NOT NULL,
            tags TEXT[] COLLATE "C" NOT NULL DEFAULT '{}',
            priority TEXT NOT NULL,
            source TEXT NOT NULL,
            confidence DOUBLE PRECISION NOT NULL,
            layer TEXT NOT NULL,
            created_at TEXT COLLATE "C" NOT NULL,
            updated_at TEXT COLLATE "C" NOT NULL,
            expires_at TEXT COLLATE "C",
            version INTEGER NOT NULL,
            etag TEXT COLLATE "C" NOT NULL,
            conflict BOOLEAN NOT NULL DEFAULT FALSE,
            conflict_of TEXT COLLATE "C",
            session_id TEXT COLLATE "C",
            promoted_from TEXT COLLATE "C",
            compacted BOOLEAN NOT NULL DEFAULT FALSE,
            superseded_by TEXT COLLATE "C",
            search TSVECTOR GENERATED ALWAYS AS (entry_search_vector(content, tags)) STORED
        )
        """
    )
    conn.execute("CREATE INDEX entries_by_namespace ON entries (scope, namespace, created_at DESC, id DESC)")
    conn.execute("CREATE INDEX entries_by_conflict_of ON entries (conflict_of) WHERE conflict_of IS NOT NULL")
    conn.execute("CREATE INDEX entries_by_session ON entries (session_id) WHERE session_id IS NOT NULL")
    conn.execute("CREATE INDEX entries_by_expiry ON entries (expires_at) WHERE expires_at IS NOT NULL")
    conn.execute("CREATE INDEX entries_by_session_turn ON entries (namespace, session_id, created_at, seq) "
                 "WHERE session_id IS NOT NULL")
    conn.execute("CREATE INDEX entries_search ON entries USING gin (search)")


def _m002_audit(conn: psycopg.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE audit (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            at TEXT COLLATE "C" NOT NULL,
            request_id TEXT NOT NULL,
            agent_id TEXT COLLATE "C" NOT NULL,
            team TEXT COLLATE "C" NOT NULL,
            system_type TEXT NOT NULL,
            tool TEXT NOT NULL,
            action TEXT NOT NULL,
            scope TEXT,
            namespace TEXT COLLATE "C",
            entry_id TEXT COLLATE "C",
            outcome TEXT NOT NULL,
            details TEXT NOT NULL DEFAULT '{}'
        )
        """
    )
    conn.execute("CREATE INDEX audit_by_time ON audit (at)")
    conn.execute("CREATE INDEX audit_by_agent ON audit (agent_id, at)")
    conn.execute(
        "CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'audit is append-only'; END $$"
    )
    conn.execute("CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit "
                 "FOR EACH ROW EXECUTE FUNCTION audit_append_only()")
    conn.execute("CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit "
                 "FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only()")


def _m003_server_meta(conn: psycopg.Connection) -> None:
    conn.execute("CREATE TABLE server_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO server_meta (key, value) VALUES ('cursor_secret', %s)", (secrets.token_hex(32),))


def _m004_vector_outbox(conn: psycopg.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE vector_outbox (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            entry_id TEXT COLLATE "C" NOT NULL,
            op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
            scope TEXT NOT NULL,
            namespace TEXT COLLATE "C" NOT NULL,
            enqueued_at TEXT COLLATE "C" NOT NULL
        )
        """
    )


def _m005_partitions(conn: psycopg.Connection) -> None:
    # Every (scope, namespace) that ever held an entry, kept by a trigger so no writer can forget it.
    conn.execute('CREATE TABLE partitions (scope TEXT NOT NULL, namespace TEXT COLLATE "C" NOT NULL, '
                 "PRIMARY KEY (scope, namespace))")
    conn.execute(
        "CREATE FUNCTION entries_partition() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "INSERT INTO partitions (scope, namespace) VALUES (NEW.scope, NEW.namespace) ON CONFLICT DO NOTHING; "
        "RETURN NULL; END $$"
    )
    conn.execute("CREATE TRIGGER entries_partition AFTER INSERT ON entries "
                 "FOR EACH ROW EXECUTE FUNCTION entries_partition()")


def _m006_reflection_marks(conn: psycopg.Connection) -> None:
    # How far each session has been reflected: the `seq` of the last turn distilled, and when.
    conn.execute(
        """
        CREATE TABLE reflection_marks (
            namespace TEXT COLLATE "C" NOT NULL,
            team TEXT COLLATE "C" NOT NULL,
            session_id TEXT COLLATE "C" NOT NULL,
            last_seq BIGINT NOT NULL,
            reflected_at TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (namespace, team, session_id)
        )
        """
    )


def _require_pgvector(conn: psycopg.Connection) -> None:
    """Create the `vector` extension if absent (it is not a trusted extension: that needs a
    superuser, or an operator who ran `CREATE EXTENSION vector` in this database once).

    Raises: PostgresSetupError."""
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
        available = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        if available is None:
            raise PostgresSetupError("pgvector is not installed on this PostgreSQL server (the `vector` "
                                     f"extension, {PGVECTOR_MIN[0]}.{PGVECTOR_MIN[1]} or later, is needed)")
        try:
            with conn.transaction():  # a savepoint: the error below must not abort the migration's transaction
                conn.execute("CREATE EXTENSION vector")
        except psycopg.errors.InsufficientPrivilege:
            raise PostgresSetupError("this role may not create the `vector` extension: run `CREATE EXTENSION "
                                     "vector;` once in this database as a superuser, then start again") from None
        row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    version = tuple(int(part) for part in str(row[0]).split(".")[:2])
    if version < PGVECTOR_MIN:
        raise PostgresSetupError(f"pgvector {row[0]} is too old: HNSW indexes need "
                                 f"{PGVECTOR_MIN[0]}.{PGVECTOR_MIN[1]} or later (ALTER EXTENSION vector UPDATE)")


def _m007_entry_vectors(conn: psycopg.Connection) -> None:
    # Derived data, written by the outbox applier; gone with its entry. Searched by cosine within
    # partitions (scope, namespace).
    _require_pgvector(conn)
    conn.execute(
        f"""
        CREATE TABLE entry_vectors (
            entry_id TEXT COLLATE "C" PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
            scope TEXT NOT NULL,
            namespace TEXT COLLATE "C" NOT NULL,
            embedding vector({EMBEDDING_DIMENSIONS}) NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX entry_vectors_by_partition ON entry_vectors (scope, namespace)")
    conn.execute("CREATE INDEX entry_vectors_nearest ON entry_vectors USING hnsw (embedding vector_cosine_ops)")


def _m012_entry_keys(conn: psycopg.Connection) -> None:
    # A stable name an entry is written by (memory_crud create's `key`, the LangGraph store's keys):
    # one entry per key in each place, so racing writers of a key update it instead of adding one.
    conn.execute('ALTER TABLE entries ADD COLUMN key TEXT COLLATE "C"')
    # Items the LangGraph store wrote before kept their key as a tag `lg-key:<key>`: the newest
    # (what it read back) takes the key; older duplicates, which racing puts left, stay unkeyed.
    conn.execute(
        "WITH tagged AS (SELECT id, scope, namespace, COALESCE(team, '') AS team, created_at, "
        "(SELECT MIN(substr(t, 8)) FROM unnest(entries.tags) AS t WHERE left(t, 7) = 'lg-key:') AS k "
        "FROM entries WHERE NOT conflict AND 'langgraph' = ANY(tags)), "
        "ranked AS (SELECT id, k, ROW_NUMBER() OVER (PARTITION BY scope, namespace, team, k "
        "ORDER BY created_at DESC, id DESC) AS n FROM tagged WHERE k <> '') "
        "UPDATE entries SET key = ranked.k FROM ranked WHERE ranked.id = entries.id AND ranked.n = 1")
    conn.execute("CREATE UNIQUE INDEX entries_by_key ON entries (scope, namespace, (COALESCE(team, '')), key) "
                 "WHERE key IS NOT NULL AND NOT conflict")


def _m013_superseded_index(conn: psycopg.Connection) -> None:
    # Which facts a fact replaced (memory_retrieve's `supersedes`, the console's history).
    conn.execute("CREATE INDEX entries_by_superseded_by ON entries (superseded_by) WHERE superseded_by IS NOT NULL")


def _m014_domains(conn: psycopg.Connection) -> None:
    # What an entry is about (user_pref, system_fact, session_summary, agent_eval, code_context), or NULL.
    conn.execute("ALTER TABLE entries ADD COLUMN domain TEXT CHECK (domain IN ('user_pref', 'system_fact', "
                 "'session_summary', 'agent_eval', 'code_context'))")


def _m017_kept_marks(conn: psycopg.Connection) -> None:
    # How far a session's turns were carried into long-term memory (distilled and summarised,
    # core/sessions/keeping.py): a turn past this number is never pruned.
    conn.execute("ALTER TABLE reflection_marks ADD COLUMN kept_turn BIGINT NOT NULL DEFAULT 0")


MIGRATIONS: tuple[tuple[str, Migration], ...] = (
    ("001_entries", _m001_entries),
    ("002_audit", _m002_audit),
    ("003_server_meta", _m003_server_meta),
    ("004_vector_outbox", _m004_vector_outbox),
    ("005_partitions", _m005_partitions),
    ("006_reflection_marks", _m006_reflection_marks),
    ("007_entry_vectors", _m007_entry_vectors),
    ("008_turn_numbers", m008_turn_numbers),
    ("009_vector_outbox_by_entry", m009_vector_outbox_by_entry),
    ("010_vector_outbox_vacuum", m010_vector_outbox_vacuum),
    ("011_tokens", m011_tokens),  # issued tokens and revocations (storage/postgres/tokens.py)
    ("012_entry_keys", _m012_entry_keys),
    ("013_superseded_index", _m013_superseded_index),
    ("014_domains", _m014_domains),
    ("015_read_lists", postgres_015_read_lists),  # read lists (storage/read_lists.py)
    ("016_key_slots", postgres_016_key_slots),  # a read-listed entry's key is its owner's (storage/key_slots.py)
    ("017_kept_marks", _m017_kept_marks),
)


def _recorded(conn: psycopg.Connection) -> set[str]:
    if conn.execute("SELECT to_regclass('schema_migrations')").fetchone() == (None,):
        return set()
    return {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}


async def migrate(db: PostgresDatabase) -> list[str]:
    """Apply the migrations not yet recorded, in order, in one transaction. Several servers may
    start at once: a transaction-level advisory lock lets one apply them while the others wait,
    then find nothing left to do. Returns the names applied now; a store already up to date is
    only read.

    Raises:
        PostgresSetupError: pgvector is missing, too old, or this role may not create it.
        psycopg.Error: the database refused a statement."""
    if {name for name, _ in MIGRATIONS} <= await db.read(_recorded):
        return []

    def apply(conn: psycopg.Connection) -> list[str]:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = _recorded(conn)
        applied: list[str] = []
        for name, step in MIGRATIONS:
            if name not in done:
                step(conn)
                conn.execute("INSERT INTO schema_migrations (name, applied_at) VALUES (%s, %s)",
                             (name, format_ts(utc_now())))
                applied.append(name)
        return applied

    return await db.transact(apply)


async def read_meta(db: PostgresDatabase, key: str) -> str | None:
    row = await db.read(lambda conn: conn.execute("SELECT value FROM server_meta WHERE key = %s", (key,)).fetchone())
    return str(row[0]) if row else None
