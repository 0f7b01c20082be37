"""The vector outbox applier on PostgreSQL: any number of servers apply it at once, each change
exactly once, with no owner.

One batch is one transaction on one connection:
1. claim: the oldest outbox rows not claimed by another server (`FOR UPDATE SKIP LOCKED`), and any
   other queued rows for the same entries (one embedding serves them all); read those entries;
2. embed their content (on the caller's indexing thread: the transaction waits idle, holding only
   the claimed outbox rows, which every other server skips);
3. write: lock the entries `FOR SHARE SKIP LOCKED` (a write to one of them waits these few
   milliseconds; the applier never waits for a writer, so the two can never deadlock), and for
   each entry, as it is NOW: gone or compacted -> its vector is deleted; content unchanged since
   step 1 -> its vector is upserted; content changed meanwhile, or locked by a writer right now ->
   nothing is written and its outbox rows stay queued (the next batch embeds what it then holds).
   The consumed rows are deleted and everything commits at once.
A vector is therefore only ever written for the content its entry holds at commit, so a slow
server can never overwrite a newer vector with a stale one; and the vector and the outbox row
change in one commit, so at every instant an entry is either indexed or still queued (what
read-your-writes relies on). A server killed mid-batch loses its connection: PostgreSQL rolls the
transaction back and the rows are claimed again by whichever server comes next.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg

from agent_memory.storage.embedding.indexing_clock import IndexingClock
from agent_memory.storage.postgres import vectors_model

IDLE_LIMIT_MS = 60_000
CLAIM = "SELECT seq, entry_id FROM vector_outbox ORDER BY seq LIMIT %s FOR UPDATE SKIP LOCKED"
CLAIM_SAME_ENTRIES = ("SELECT seq, entry_id FROM vector_outbox WHERE entry_id = ANY(%s) AND NOT (seq = ANY(%s)) "
                      "FOR UPDATE SKIP LOCKED")

# One statement (one round trip) for the whole batch, rows in entry id order.
UPSERT = ("INSERT INTO entry_vectors (entry_id, scope, namespace, embedding) "
          "SELECT e.id, e.scope, e.namespace, v.embedding::vector "
          "FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS v(entry_id, embedding, n) "
          "JOIN entries e ON e.id = v.entry_id ORDER BY v.n "
          "ON CONFLICT (entry_id) DO UPDATE SET embedding = excluded.embedding, scope = excluded.scope, "
          "namespace = excluded.namespace")


@dataclass(frozen=True, slots=True)
class BatchResult:
    consumed: int  # outbox rows deleted
    embedded: int  # texts embedded
    stored: int  # vectors upserted
    removed: int  # entries whose vector was deleted (gone or compacted)
    deferred: int  # entries changed while embedding: left queued


EMPTY = BatchResult(0, 0, 0, 0, 0)


def vector_text(row: Any) -> str:
    """pgvector's text form of a float vector (`'[0.1,0.2,...]'`, cast with `::vector`)."""
    return "[" + ",".join(format(float(x), ".8g") for x in row) + "]"


def apply_batch(conn: psycopg.Connection, size: int, embed: Callable[[list[str]], Any],
                model: str | None = None, clock: IndexingClock | None = None) -> BatchResult:
    """Apply up to `size` outbox rows (plus rows for the same entries) inside the caller's
    transaction on `conn` (see the module docstring). `embed(texts)` returns one unit vector per
    text, by `model` (checked against the store's, `vectors_model`, when given). Raises whatever
    the database or `embed` raises, or ModelMismatch (the caller rolls back: nothing changed)."""
    clock = clock or IndexingClock()
    with clock.step("read"):
        claimed = conn.execute(CLAIM, (size,)).fetchall()
    if not claimed:
        return EMPTY
    clock.batch_started()
    started = time.perf_counter()
    # A server that vanishes without closing its connection (a host lost, a network cut) would
    # otherwise keep the rows locked until TCP gives up, hours later: PostgreSQL ends the session
    # once it has waited this long for the next statement (embedding a batch takes seconds).
    conn.execute("SELECT set_config('idle_in_transaction_session_timeout', %s, true)", (str(IDLE_LIMIT_MS),))
    if model is not None:
        vectors_model.agree(conn, model)
    seqs: dict[str, list[int]] = {}
    for seq, entry_id in claimed:
        seqs.setdefault(entry_id, []).append(seq)
    ids = sorted(seqs)
    for seq, entry_id in conn.execute(CLAIM_SAME_ENTRIES, (ids, [row[0] for row in claimed])).fetchall():
        seqs[entry_id].append(seq)
    live = {row[0]: row[1] for row in conn.execute(
        "SELECT id, content FROM entries WHERE id = ANY(%s) AND NOT compacted", (ids,)).fetchall()}
    order = sorted(live)
    started = clock.lap("read", started)
    vectors = embed([live[i] for i in order]) if order else []
    started = clock.lap("embed", started)
    now = {row[0]: (row[1], row[2]) for row in conn.execute(
        "SELECT id, content, compacted FROM entries WHERE id = ANY(%s) ORDER BY id FOR SHARE SKIP LOCKED",
        (ids,)).fetchall()}
    upserts: list[tuple[str, str]] = []
    removed: list[str] = []
    deferred: list[str] = []
    for position, entry_id in enumerate(order):
        content, compacted = now.get(entry_id, (None, False))  # absent: deleted, or locked by a writer
        if compacted:
            removed.append(entry_id)
        elif content is not None and content == live[entry_id]:
            upserts.append((entry_id, vector_text(vectors[position])))
        else:
            deferred.append(entry_id)
    for entry_id in ids:
        if entry_id not in live:  # deleted or compacted before this batch read it: never live again
            removed.append(entry_id)
    if upserts:  # in entry id order, as every applier: two batches never wait on each other crosswise
        conn.execute(UPSERT, ([entry_id for entry_id, _ in upserts], [text for _, text in upserts]))
    if removed:
        conn.execute("DELETE FROM entry_vectors WHERE entry_id = ANY(%s)", (sorted(removed),))
    clock.lap("index", started)
    keep = set(deferred)
    consumed = [seq for entry_id in ids if entry_id not in keep for seq in seqs[entry_id]]
    if consumed:
        with clock.step("forget"):
            conn.execute("DELETE FROM vector_outbox WHERE seq = ANY(%s)", (consumed,))
    return BatchResult(len(consumed), len(order), len(upserts), len(removed), len(deferred))


def requeue_all(conn: psycopg.Connection, model: str) -> int:
    """Drop every vector and queue every live entry again, to be embedded by `model` from now on
    (for `reindex`: perhaps another model's vectors). TRUNCATE, not DELETE: the HNSW index starts
    afresh instead of keeping every old vector as a dead tuple (searches wait the moment it
    takes). Returns how many entries were queued."""
    vectors_model.switch(conn, model)
    conn.execute("TRUNCATE entry_vectors")
    return conn.execute(
        "INSERT INTO vector_outbox (entry_id, op, scope, namespace, enqueued_at) "
        "SELECT id, 'upsert', scope, namespace, created_at FROM entries WHERE NOT compacted ORDER BY seq").rowcount


def backlog(conn: psycopg.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM vector_outbox").fetchone()[0])


def m009_vector_outbox_by_entry(conn: psycopg.Connection) -> None:
    """Migration: a batch also claims the other queued rows of its entries (and retrieval looks
    queued entries up), by entry id: without this index each would scan the whole outbox, which
    after a `reindex` holds every entry."""
    conn.execute("CREATE INDEX vector_outbox_by_entry ON vector_outbox (entry_id)")


def m010_vector_outbox_vacuum(conn: psycopg.Connection) -> None:
    """Migration: the outbox is a queue (every row is deleted soon after it is written), so
    autovacuum should clean it after a thousand dead rows, not after a fifth of a table that is
    usually empty: until it does, its statistics describe the rows already applied."""
    conn.execute("ALTER TABLE vector_outbox SET (autovacuum_vacuum_scale_factor = 0, "
                 "autovacuum_vacuum_threshold = 1000, autovacuum_analyze_scale_factor = 0, "
                 "autovacuum_analyze_threshold = 1000)")
