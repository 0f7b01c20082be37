"""Ordered schema migrations, each recorded in `schema_migrations` once applied."""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable

from agent_memory.core.model.clock import format_ts, utc_now
from agent_memory.core.model.text import is_storable, storable
from agent_memory.storage.key_slots import sqlite_019_key_slots
from agent_memory.storage.read_lists import sqlite_018_read_lists
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.tokens import m013_tokens

Migration = Callable[[sqlite3.Connection], None]


def _m001_entries(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE entries (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            scope TEXT NOT NULL CHECK (scope IN ('agent', 'team', 'global')),
            namespace TEXT NOT NULL,
            team TEXT,
            owner_agent_id TEXT NOT NULL,
            content TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            priority TEXT NOT NULL,
            source TEXT NOT NULL,
            confidence REAL NOT NULL,
            layer TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            expires_at TEXT,
            version INTEGER NOT NULL,
            etag TEXT NOT NULL,
            conflict INTEGER NOT NULL DEFAULT 0,
            conflict_of TEXT,
            session_id TEXT,
            promoted_from TEXT
        )
        """
    )
    conn.execute(
        "CREATE INDEX entries_by_namespace ON entries (scope, namespace, created_at DESC, id DESC)"
    )
    conn.execute("CREATE INDEX entries_by_conflict_of ON entries (conflict_of) WHERE conflict_of IS NOT NULL")
    conn.execute("CREATE INDEX entries_by_session ON entries (session_id) WHERE session_id IS NOT NULL")
    conn.execute("CREATE INDEX entries_by_expiry ON entries (expires_at) WHERE expires_at IS NOT NULL")


def _m002_fts(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE VIRTUAL TABLE entries_fts USING fts5("
        "content, tags, content='entries', content_rowid='rowid', tokenize='porter unicode61')"
    )
    conn.execute(
        "CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN "
        "INSERT INTO entries_fts (rowid, content, tags) VALUES (new.rowid, new.content, new.tags); END"
    )
    conn.execute(
        "CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN "
        "INSERT INTO entries_fts (entries_fts, rowid, content, tags) "
        "VALUES ('delete', old.rowid, old.content, old.tags); END"
    )
    conn.execute(
        "CREATE TRIGGER entries_fts_update AFTER UPDATE OF content, tags ON entries BEGIN "
        "INSERT INTO entries_fts (entries_fts, rowid, content, tags) "
        "VALUES ('delete', old.rowid, old.content, old.tags); "
        "INSERT INTO entries_fts (rowid, content, tags) VALUES (new.rowid, new.content, new.tags); END"
    )


def _m003_audit(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE audit (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            request_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            team TEXT NOT NULL,
            system_type TEXT NOT NULL,
            tool TEXT NOT NULL,
            action TEXT NOT NULL,
            scope TEXT,
            namespace TEXT,
            entry_id TEXT,
            outcome TEXT NOT NULL,
            details TEXT NOT NULL DEFAULT '{}'
        )
        """
    )
    conn.execute("CREATE INDEX audit_by_time ON audit (at)")
    conn.execute("CREATE INDEX audit_by_agent ON audit (agent_id, at)")
    for verb in ("UPDATE", "DELETE"):
        conn.execute(
            f"CREATE TRIGGER audit_append_only_{verb.lower()} BEFORE {verb} ON audit "
            "BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END"
        )


def _m004_server_meta(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE server_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute(
        "INSERT INTO server_meta (key, value) VALUES ('cursor_secret', ?)", (secrets.token_hex(32),)
    )


def _m005_vector_outbox(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE vector_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            entry_id TEXT NOT NULL,
            op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
            scope TEXT NOT NULL,
            namespace TEXT NOT NULL,
            enqueued_at TEXT NOT NULL
        )
        """
    )
    # Entries written before the vector index existed are indexed from the backlog.
    conn.execute(
        "INSERT INTO vector_outbox (entry_id, op, scope, namespace, enqueued_at) "
        "SELECT id, 'upsert', scope, namespace, created_at FROM entries ORDER BY rowid"
    )


def _m006_fts_vocabulary(conn: sqlite3.Connection) -> None:
    # Read-only views over the FTS5 index: document frequency per term, and term occurrences
    # per document (for BM25 scoring without length normalisation).
    conn.execute("CREATE VIRTUAL TABLE entries_fts_terms USING fts5vocab(entries_fts, 'row')")
    conn.execute("CREATE VIRTUAL TABLE entries_fts_hits USING fts5vocab(entries_fts, 'instance')")


def _m007_partitions(conn: sqlite3.Connection) -> None:
    # Every (scope, namespace) that ever held an entry: retrieval reads this small table instead
    # of a DISTINCT over all entries. Kept by a trigger, so no writer can forget it.
    conn.execute("CREATE TABLE partitions (scope TEXT NOT NULL, namespace TEXT NOT NULL, "
                 "PRIMARY KEY (scope, namespace)) WITHOUT ROWID")
    conn.execute("INSERT OR IGNORE INTO partitions SELECT DISTINCT scope, namespace FROM entries")
    conn.execute("CREATE TRIGGER entries_partition AFTER INSERT ON entries BEGIN "
                 "INSERT OR IGNORE INTO partitions (scope, namespace) VALUES (new.scope, new.namespace); END")


def _m008_sessions(conn: sqlite3.Connection) -> None:
    # Compacted session turns stay (listable) but leave retrieval; a reflection watermark per
    # session records the last turn (by rowid) already distilled.
    conn.execute("ALTER TABLE entries ADD COLUMN compacted INTEGER NOT NULL DEFAULT 0")
    conn.execute("CREATE INDEX entries_by_session_turn ON entries (namespace, session_id, created_at, rowid) "
                 "WHERE session_id IS NOT NULL")
    conn.execute(
        """
        CREATE TABLE reflection_marks (
            namespace TEXT NOT NULL,
            team TEXT NOT NULL,
            session_id TEXT NOT NULL,
            last_rowid INTEGER NOT NULL,
            reflected_at TEXT NOT NULL,
            PRIMARY KEY (namespace, team, session_id)
        ) WITHOUT ROWID
        """
    )


def _m009_entry_vectors(conn: sqlite3.Connection) -> None:
    # A copy of each indexed entry's vector (float16), written by the outbox applier: retrieval
    # scores keyword candidates against it with one indexed read instead of a vector-index fetch.
    # Derived data like the index itself; gone with its entry.
    conn.execute("CREATE TABLE entry_vectors (entry_id TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID")
    conn.execute("CREATE TRIGGER entries_vector_gone AFTER DELETE ON entries BEGIN "
                 "DELETE FROM entry_vectors WHERE entry_id = old.id; END")


def _m010_four_digit_years(conn: sqlite3.Connection) -> None:
    # Turns logged with `at` before year 1000 were stored as `999-01-02T...`, which sorts after
    # every four-digit year: pad the year so timestamps sort in time order again.
    for column in ("created_at", "updated_at"):
        conn.execute(f"UPDATE entries SET {column} = substr('000', 1, 5 - instr({column}, '-')) || {column} "
                     f"WHERE instr({column}, '-') BETWEEN 2 AND 4")


def _m011_superseded(conn: sqlite3.Connection) -> None:
    # A fact a later fact changed stays (listable, readable, audited) but leaves retrieval.
    conn.execute("ALTER TABLE entries ADD COLUMN superseded_by TEXT")


def _m012_audit_by_entry(conn: sqlite3.Connection) -> None:
    # The memory console shows an entry's own audit trail: without this it scans the whole table.
    conn.execute("CREATE INDEX audit_by_entry ON audit (entry_id, at) WHERE entry_id IS NOT NULL")


def _m014_storable_tags(conn: sqlite3.Connection) -> None:
    # Imports before the text rule (core/model/text.py) could store a tag holding a lone surrogate (JSON
    # keeps it as an escape), which no answer, export or other store can carry: escape it as text.
    rows = conn.execute("SELECT id, tags FROM entries WHERE instr(tags, '\\ud') > 0").fetchall()
    for entry_id, tags in rows:
        decoded = json.loads(tags)
        if all(is_storable(tag) for tag in decoded):
            continue  # a surrogate pair (an emoji) written as escapes
        conn.execute("UPDATE entries SET tags = ? WHERE id = ?",
                     (json.dumps([storable(tag) for tag in decoded]), entry_id))


def _m015_entry_keys(conn: sqlite3.Connection) -> None:
    # A stable name an entry is written by (memory_crud create's `key`, the LangGraph store's keys):
    # one entry per key in each place, so racing writers of a key update it instead of adding one.
    conn.execute("ALTER TABLE entries ADD COLUMN key TEXT")
    # Items the LangGraph store wrote before kept their key as a tag `lg-key:<key>`: the newest
    # (what it read back) takes the key; older duplicates, which racing puts left, stay unkeyed.
    conn.execute(
        "WITH tagged AS (SELECT id, scope, namespace, COALESCE(team, '') AS team, created_at, "
        "(SELECT MIN(substr(value, 8)) FROM json_each(entries.tags) WHERE substr(value, 1, 7) = 'lg-key:') AS k "
        "FROM entries WHERE conflict = 0 "
        "AND EXISTS (SELECT 1 FROM json_each(entries.tags) WHERE value = 'langgraph')), "
        "ranked AS (SELECT id, k, ROW_NUMBER() OVER (PARTITION BY scope, namespace, team, k "
        "ORDER BY created_at DESC, id DESC) AS n FROM tagged WHERE k <> '') "
        "UPDATE entries SET key = (SELECT k FROM ranked WHERE ranked.id = entries.id) "
        "WHERE id IN (SELECT id FROM ranked WHERE n = 1)")
    conn.execute("CREATE UNIQUE INDEX entries_by_key ON entries (scope, namespace, COALESCE(team, ''), key) "
                 "WHERE key IS NOT NULL AND conflict = 0")


def _m016_superseded_index(conn: sqlite3.Connection) -> None:
    # Which facts a fact replaced (memory_retrieve's `supersedes`, the console's history).
    conn.execute("CREATE INDEX entries_by_superseded_by ON entries (superseded_by) WHERE superseded_by IS NOT NULL")


def _m017_domains(conn: sqlite3.Connection) -> None:
    # What an entry is about (user_pref, system_fact, session_summary, agent_eval, code_context), or NULL.
    conn.execute("ALTER TABLE entries ADD COLUMN domain TEXT CHECK (domain IN ('user_pref', 'system_fact', "
                 "'session_summary', 'agent_eval', 'code_context'))")


def _m020_kept_marks(conn: sqlite3.Connection) -> None:
    # How far a session's turns were carried into long-term memory (distilled and summarised,
    # core/sessions/keeping.py): a turn past this position is never pruned.
    conn.execute("ALTER TABLE reflection_marks ADD COLUMN kept_rowid INTEGER NOT NULL DEFAULT 0")


MIGRATIONS: tuple[tuple[str, Migration], ...] = (
    ("001_entries", _m001_entries),
    ("002_fts", _m002_fts),
    ("003_audit", _m003_audit),
    ("004_server_meta", _m004_server_meta),
    ("005_vector_outbox", _m005_vector_outbox),
    ("006_fts_vocabulary", _m006_fts_vocabulary),
    ("007_partitions", _m007_partitions),
    ("008_sessions", _m008_sessions),
    ("009_entry_vectors", _m009_entry_vectors),
    ("010_four_digit_years", _m010_four_digit_years),
    ("011_superseded", _m011_superseded),
    ("012_audit_by_entry", _m012_audit_by_entry),
    ("013_tokens", m013_tokens),  # issued tokens and revocations (storage/sqlite/tokens.py)
    ("014_storable_tags", _m014_storable_tags),
    ("015_entry_keys", _m015_entry_keys),
    ("016_superseded_index", _m016_superseded_index),
    ("017_domains", _m017_domains),
    ("018_read_lists", sqlite_018_read_lists),  # read lists (storage/read_lists.py)
    ("019_key_slots", sqlite_019_key_slots),  # a read-listed entry's key is its owner's (storage/key_slots.py)
    ("020_kept_marks", _m020_kept_marks),
)


async def migrate(db: Database) -> list[str]:
    """Apply the migrations not yet recorded, in order, in one transaction (safe when several
    processes start at once: `BEGIN IMMEDIATE` lets one apply them while the others wait).

    Returns the names applied now. A store already up to date is only read, so a process can
    start while another holds a long write transaction."""

    def recorded(conn: sqlite3.Connection) -> set[str]:
        try:
            return {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
        except sqlite3.OperationalError:  # a new database: no table yet
            return set()

    if {name for name, _ in MIGRATIONS} <= await db.read(recorded):
        return []

    def apply(conn: sqlite3.Connection) -> list[str]:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
        applied: list[str] = []
        for name, step in MIGRATIONS:
            if name not in done:
                step(conn)
                conn.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)", (name, format_ts(utc_now()))
                )
                applied.append(name)
        return applied

    return await db.transact(apply)


async def read_meta(db: Database, key: str) -> str | None:
    async with db.reading() as conn:
        rows = list(await conn.execute_fetchall("SELECT value FROM server_meta WHERE key = ?", (key,)))
    return str(rows[0][0]) if rows else None
