"""Semantic search on PostgreSQL + pgvector (`PgVectorRuntime`), on a real PostgreSQL 16 with
pgvector (tests/postgres.py) and the real packaged embedding model: the outbox applied by any
number of servers, each change once, even when one dies mid-batch; searches within partitions;
read-your-writes for entries still queued."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import replace

import anyio
import pytest

from agent_memory.core.model.ids import new_etag
from agent_memory.core.model.models import Entry, Scope
from agent_memory.core.ports import Partition, SemanticUnavailable
from agent_memory.storage.embedding.embedder import EmbedderUnavailable, ModelFiles, default_model_files
from agent_memory.storage.embedding.queries import VectorMeaning
from tests.storage.stores import stored

pytestmark = pytest.mark.anyio
psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from agent_memory.storage.postgres import (  # noqa: E402 - after the driver check
    vectors_model,
    vectors_outbox,
    vectors_search,
)
from agent_memory.storage.postgres.database import PostgresDatabase  # noqa: E402
from agent_memory.storage.postgres.entries import PostgresEntryRepository, PostgresWriteTransaction  # noqa: E402
from agent_memory.storage.postgres.migrations import migrate  # noqa: E402
from agent_memory.storage.postgres.vectors import PgVectorRuntime  # noqa: E402

RED = Partition("team", "red")
BLUE = Partition("team", "blue")


@pytest.fixture
async def db(postgres_url: str) -> AsyncIterator[PostgresDatabase]:
    database = PostgresDatabase(postgres_url, pool_size=6)
    await database.open()
    try:
        await migrate(database)
        yield database
    finally:
        await database.close()


def model_files() -> ModelFiles:
    return default_model_files()


@pytest.fixture
async def runtime(db: PostgresDatabase) -> AsyncIterator[PgVectorRuntime]:
    """A runtime whose outbox is applied only when a test says so (no background task)."""
    vectors = PgVectorRuntime(db, model_files)
    try:
        assert await vectors.take_over()
        yield vectors
    finally:
        await vectors.aclose()


def fact(partition: Partition, content: str) -> Entry:
    return stored(Scope(partition.scope), partition.namespace, team=partition.namespace, content=content)


async def write(repo: PostgresEntryRepository, *entries: Entry) -> list[Entry]:
    def work(tx: PostgresWriteTransaction) -> None:
        for entry in entries:
            tx.insert(entry)
            tx.enqueue_vector(entry, "upsert")

    await repo.transact(work)
    return list(entries)


async def drain(vectors: PgVectorRuntime) -> int:
    done = 0
    while (applied := await vectors.apply_pending()) > 0:
        done += applied
    return done


async def stored_content(runtime: PgVectorRuntime, entry_id: str) -> str:
    """Which of the test's texts the entry's stored vector was embedded from: the one it is
    nearest to by a clear margin (a vector's similarity to its own text is about 1, to the other
    texts far lower), never a similarity compared with a constant a model release can move."""
    texts = ("The cat sat on the mat.", "Quarterly revenue grew eight percent.",
             "The wifi password is on the fridge.", "Standup moved to 9:30.")
    scores = []
    for text in texts:
        hits, _ = await runtime.nearest(text, [RED], 10)
        scores.append(dict(hits).get(entry_id, -1.0))
    ranked = sorted(zip(scores, texts, strict=True), reverse=True)
    assert ranked[0][0] - ranked[1][0] > 0.3, ranked
    return ranked[0][1]


async def scalar(db: PostgresDatabase, sql: str, *params: object) -> object:
    return await db.read(lambda conn: conn.execute(sql, params).fetchone()[0])


async def test_a_paraphrase_is_found_by_meaning_once_the_outbox_is_applied(
        db: PostgresDatabase, runtime: PgVectorRuntime) -> None:
    repo = PostgresEntryRepository(db, on_vector_change=runtime.notify)
    cat, revenue, deploys = await write(
        repo, fact(RED, "The cat sat on the mat all afternoon."),
        fact(RED, "Quarterly revenue grew eight percent."),
        fact(RED, "Deploys to staging run from the main branch after the nightly build passes."))
    assert await runtime.backlog() == 3
    assert await drain(runtime) == 3
    assert await runtime.backlog() == 0 and runtime.embedded == 3
    assert await scalar(db, "SELECT count(*) FROM entry_vectors") == 3

    hits, vector = await runtime.nearest("a feline resting on a rug", [RED], 10)
    assert [entry_id for entry_id, _ in hits][0] == cat.id and len(hits) == 3
    assert hits[0][1] - max(score for _, score in hits[1:]) > 0.2  # first by a clear margin
    assert len(vector) == 384
    again = await runtime.similarities(vector, [RED], [cat.id, revenue.id, "absent"])
    assert set(again) == {cat.id, revenue.id} and abs(again[cat.id] - hits[0][1]) < 1e-4
    hits, _ = await runtime.nearest("how do we ship code to the test environment", [RED], 1)
    assert [entry_id for entry_id, _ in hits] == [deploys.id]


async def test_a_search_never_returns_vectors_of_other_partitions(db: PostgresDatabase,
                                                                  runtime: PgVectorRuntime) -> None:
    repo = PostgresEntryRepository(db)
    red = await write(repo, *(fact(RED, f"The red team's deploy key number {i} rotates monthly.") for i in range(5)))
    blue = await write(repo, fact(BLUE, "Blue team lunch is at noon on Fridays."))
    await drain(runtime)
    hits, vector = await runtime.nearest("when does the red team's deploy key rotate", [BLUE], 10)
    assert [entry_id for entry_id, _ in hits] == [blue[0].id]  # the only one blue may see, however far
    assert await runtime.similarities(vector, [BLUE], [e.id for e in red]) == {}
    both, _ = await runtime.nearest("deploy key rotation", [RED, BLUE], 10)
    assert {entry_id for entry_id, _ in both} == {e.id for e in [*red, *blue]}
    nobody, _ = await runtime.nearest("anything", [Partition("team", "green")], 10)
    assert nobody == []


def test_the_hnsw_plan_is_chosen_only_where_it_beats_an_exact_scan() -> None:
    assert vectors_search.plan(10_000, 10_000, 100) == 200  # the whole table: HNSW, over-fetching 2x
    assert vectors_search.plan(5_000, 10_000, 100) == 400
    assert vectors_search.plan(1_000, 10_000, 100) is None  # ef_search 2,000: over pgvector's ceiling
    assert vectors_search.plan(100, 10_000, 100) is None
    assert vectors_search.plan(1_200, 1_200, 100) is None  # a scan of 1,200 beats ef_search 200
    assert vectors_search.plan(0, 10_000, 100) is None


async def test_the_hnsw_plan_filters_partitions_and_an_answer_it_cuts_short_is_answered_exactly(
        db: PostgresDatabase, runtime: PgVectorRuntime, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = PostgresEntryRepository(db)
    await write(repo, *(fact(RED, f"Red note {i}: the build cache on host {i} is cleared weekly.") for i in range(20)))
    blue = await write(repo, *(fact(BLUE, f"Blue note {i}: lunch orders close at {i + 10} o'clock.") for i in range(4)))
    await drain(runtime)
    (vector,) = (await runtime.nearest("when is the cache cleared", [RED], 1))[1:]
    query = vectors_outbox.vector_text(vector)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("ANALYZE entry_vectors")
        conn.execute("SET enable_seqscan = off")  # a table this small would otherwise be scanned
        with conn.transaction():
            conn.execute("SELECT set_config('hnsw.ef_search', '40', true)")
            explained = "\n".join(row[0] for row in conn.execute(
                "EXPLAIN SELECT entry_id FROM entry_vectors WHERE scope || ':' || namespace = ANY(%s) "
                "ORDER BY embedding <=> %s::vector LIMIT 10", (["team:blue"], query)))
        assert "entry_vectors_nearest" in explained
        exact_blue = vectors_search.exact(conn, query, [BLUE], 10)
        assert {entry_id for entry_id, _ in exact_blue} == {e.id for e in blue}
        with conn.transaction():
            assert vectors_search.approximate(conn, query, [BLUE], 10, 40) == exact_blue
        with conn.transaction():
            assert len(vectors_search.approximate(conn, query, [BLUE], 10, 1)) < len(blue)  # cut short by the filter
        monkeypatch.setattr(vectors_search, "plan", lambda *_: 1)
        with conn.transaction():
            assert vectors_search.nearest(conn, query, [BLUE], 10) == exact_blue  # answered exactly
        exact_red = vectors_search.exact(conn, query, [RED], 10)
        monkeypatch.setattr(vectors_search, "plan", lambda *_: 40)
        with conn.transaction():
            assert [i for i, _ in vectors_search.nearest(conn, query, [RED], 10)] == [i for i, _ in exact_red]


async def test_partition_counts_are_remembered_briefly_and_a_stale_one_only_costs_time(
        db: PostgresDatabase, runtime: PgVectorRuntime, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = PostgresEntryRepository(db)
    await write(repo, *(fact(RED, f"Red note {i}: the build cache on host {i} is cleared weekly.") for i in range(6)))
    await drain(runtime)
    (vector,) = (await runtime.nearest("when is the cache cleared", [RED], 1))[1:]
    query = vectors_outbox.vector_text(vector)
    counted: list[int] = []
    real_count = vectors_search.count_in
    monkeypatch.setattr(vectors_search, "count_in", lambda conn, parts: counted.append(1) or real_count(conn, parts))
    sizes = vectors_search.PartitionSizes(ttl=60)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert sizes.count(conn, [RED, BLUE]) == 6 and sizes.count(conn, [BLUE, RED]) == 6  # one set, any order
        assert sizes.count(conn, [BLUE]) == 0
        assert len(counted) == 2
        conn.execute("DELETE FROM entry_vectors WHERE entry_id IN (SELECT entry_id FROM entry_vectors LIMIT 4)")
        assert sizes.count(conn, [RED]) == 2 and len(counted) == 3
        assert sizes.count(conn, [RED, BLUE]) == 6  # stale within the TTL ...
        assert vectors_search.PartitionSizes(ttl=0).count(conn, [RED, BLUE]) == 2  # ... and counted again after it
        # A plan chosen on the stale count (HNSW over what it thinks holds 6) that comes back short
        # is answered exactly: the two vectors left, never fewer.
        monkeypatch.setattr(vectors_search, "table_size", lambda conn: 1_000_000)
        monkeypatch.setattr(vectors_search, "plan", lambda *_: 1)
        with conn.transaction():
            found = vectors_search.nearest(conn, query, [RED, BLUE], 10, sizes)
        assert sorted(i for i, _ in found) == sorted(i for i, _ in vectors_search.exact(conn, query, [RED], 10))
        assert len(found) == 2


async def test_a_deleted_or_compacted_entry_loses_its_vector_and_an_edit_replaces_it(
        db: PostgresDatabase, runtime: PgVectorRuntime) -> None:
    repo = PostgresEntryRepository(db)
    gone, compacted, edited = await write(repo, fact(RED, "The wifi password is on the fridge."),
                                          fact(RED, "Standup moved to 9:30."), fact(RED, "The cat sat on the mat."))
    await drain(runtime)
    new = replace(edited, content="Quarterly revenue grew eight percent.", version=2, etag=new_etag())

    def change(tx: PostgresWriteTransaction) -> None:
        assert tx.delete(gone.id, expected_etag=gone.etag)
        tx.enqueue_vector(gone, "delete")
        assert tx.mark_compacted([compacted.id]) == 1
        tx.enqueue_vector(compacted, "delete")
        assert tx.replace(new, expected_etag=edited.etag)
        tx.enqueue_vector(new, "upsert")

    await repo.transact(change)
    await drain(runtime)
    assert await runtime.backlog() == 0
    ids = await db.read(lambda conn: [r[0] for r in conn.execute("SELECT entry_id FROM entry_vectors")])
    assert ids == [edited.id]
    assert await stored_content(runtime, edited.id) == new.content


async def test_two_servers_applying_at_once_apply_each_change_exactly_once(
        db: PostgresDatabase, postgres_url: str) -> None:
    repo = PostgresEntryRepository(db)
    entries = await write(repo, *(fact(RED, f"Fact number {i}: the build agent {i} runs on host {i * 7}.")
                                  for i in range(48)))
    other_db = PostgresDatabase(postgres_url, pool_size=4)  # a second server: its own connections
    await other_db.open()
    first, second = PgVectorRuntime(db, model_files, batch=4), PgVectorRuntime(other_db, model_files, batch=4)
    try:
        assert await first.take_over() and await second.take_over()
        async with anyio.create_task_group() as tg:
            tg.start_soon(drain, first)
            tg.start_soon(drain, second)
        assert first.embedded + second.embedded == len(entries)  # nobody embedded anything twice
        assert first.applied + second.applied == len(entries)
        assert first.applied > 0 and second.applied > 0  # both worked
        assert await scalar(db, "SELECT count(*) FROM entry_vectors") == len(entries)
        assert await first.backlog() == 0
    finally:
        await first.aclose()
        await second.aclose()
        await other_db.close()


CLAIM_AND_HANG = """
import sys, time, psycopg
conn = psycopg.connect(sys.argv[1])
rows = conn.execute(sys.argv[2], (3,)).fetchall()
print(",".join(row[1] for row in rows), flush=True)
time.sleep(120)
"""


async def test_a_batch_claimed_by_a_server_killed_mid_batch_is_applied_by_another(
        db: PostgresDatabase, runtime: PgVectorRuntime, postgres_url: str) -> None:
    repo = PostgresEntryRepository(db)
    entries = await write(repo, *(fact(RED, f"Runbook step {i}: restart the queue worker {i}.") for i in range(5)))
    # Another server claims three rows as the applier does (same statement), then dies (SIGKILL)
    # before committing: PostgreSQL rolls its transaction back and the rows are free again.
    dying = subprocess.Popen([sys.executable, "-c", CLAIM_AND_HANG, postgres_url, vectors_outbox.CLAIM],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert dying.stdout is not None
        claimed = (await anyio.to_thread.run_sync(dying.stdout.readline)).strip().split(",")
        assert claimed == [e.id for e in entries[:3]]
        assert await drain(runtime) == 2  # the claimed rows are skipped, not waited for
        assert await runtime.backlog() == 3
    finally:
        os.kill(dying.pid, signal.SIGKILL)
        dying.wait()
        if dying.stdout is not None:
            dying.stdout.close()
    with anyio.fail_after(30):
        while await runtime.backlog():
            await drain(runtime)
            await anyio.sleep(0.05)
    assert runtime.applied == 5 and runtime.embedded == 5
    assert await scalar(db, "SELECT count(*) FROM entry_vectors") == 5


async def test_rows_claimed_by_a_server_that_went_silent_are_freed(
        db: PostgresDatabase, runtime: PgVectorRuntime, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that stops talking mid-batch without closing its connection (a lost host): the
    database ends its session after the idle limit, and the rows go to the others."""
    await write(PostgresEntryRepository(db), fact(RED, "The cat sat on the mat."))
    monkeypatch.setattr(vectors_outbox, "IDLE_LIMIT_MS", 300)

    def silent(texts: list[str]) -> list[list[float]]:
        import time

        time.sleep(1.5)  # longer than the idle limit, between two statements of the transaction
        return [[0.0] * 384 for _ in texts]

    with psycopg.connect(postgres_url) as lost:
        with pytest.raises(psycopg.errors.IdleInTransactionSessionTimeout):
            with lost.transaction():
                vectors_outbox.apply_batch(lost, 10, silent)
    assert await drain(runtime) == 1 and await runtime.backlog() == 0


async def test_a_vector_of_content_changed_while_embedding_is_never_written(
        db: PostgresDatabase, runtime: PgVectorRuntime, postgres_url: str) -> None:
    repo = PostgresEntryRepository(db)
    (entry,) = await write(repo, fact(RED, "The cat sat on the mat."))
    new = replace(entry, content="Quarterly revenue grew eight percent.", version=2, etag=new_etag())
    embedder = runtime._index_embedder
    assert embedder is not None

    def embed_while_another_server_edits(texts: list[str]):  # noqa: ANN202
        vectors = embedder.embed_array(texts)  # the old content's vector, slowly
        with psycopg.connect(postgres_url, autocommit=True) as other:  # meanwhile, another server's edit
            with other.transaction():
                tx = PostgresWriteTransaction(other)
                assert tx.replace(new, expected_etag=entry.etag)
                tx.enqueue_vector(new, "upsert")
        return vectors

    done = await db.transact(lambda conn: vectors_outbox.apply_batch(conn, 10, embed_while_another_server_edits))
    assert (done.consumed, done.embedded, done.stored, done.deferred) == (0, 1, 0, 1)
    assert await scalar(db, "SELECT count(*) FROM entry_vectors") == 0  # the stale vector was not written
    assert await runtime.backlog() == 2
    assert await drain(runtime) == 2 and await runtime.backlog() == 0
    assert await stored_content(runtime, entry.id) == new.content  # the new content's vector


async def test_the_applier_never_waits_for_a_writer_holding_an_entry(
        db: PostgresDatabase, runtime: PgVectorRuntime, postgres_url: str) -> None:
    repo = PostgresEntryRepository(db)
    busy, free = await write(repo, fact(RED, "The cat sat on the mat."), fact(RED, "Standup moved to 9:30."))
    embedder = runtime._index_embedder
    assert embedder is not None
    with psycopg.connect(postgres_url) as writer, psycopg.connect(postgres_url) as applier:
        writer.execute("SELECT 1 FROM entries WHERE id = %s FOR UPDATE", (busy.id,))  # a write in progress
        applier.execute("SET lock_timeout = '2s'")  # waiting for the writer would fail the batch
        with applier.transaction():
            done = vectors_outbox.apply_batch(applier, 10, embedder.embed_array)
        assert (done.consumed, done.stored, done.deferred) == (1, 1, 1)  # `busy` stays queued
        writer.rollback()
    assert await drain(runtime) == 1 and await runtime.backlog() == 0
    assert await scalar(db, "SELECT count(*) FROM entry_vectors") == 2


async def test_entries_still_queued_are_scored_in_line_and_reflection_compares_meanings(
        db: PostgresDatabase, runtime: PgVectorRuntime) -> None:
    repo = PostgresEntryRepository(db)
    (indexed,) = await write(repo, fact(RED, "Quarterly revenue grew eight percent."))
    await drain(runtime)
    (waiting,) = await write(repo, fact(RED, "The cat sat on the mat."))  # acknowledged, not yet applied
    hits, vector = await runtime.nearest("a feline resting on a rug", [RED], 10)
    assert [entry_id for entry_id, _ in hits] == [indexed.id]  # not in the index yet...
    fresh = await runtime.fresh_similarities(vector, [waiting])
    assert fresh[waiting.id] - hits[0][1] > 0.2  # ...but found by meaning in-line, nearer by far
    assert runtime.embedded == 1  # in-line embedding is not indexing

    (near_cat, near_sales) = await VectorMeaning(runtime).cosines(
        ["A feline rested on the rug.", "Sales went up this quarter."], [indexed, waiting])
    assert near_cat[waiting.id] > near_cat[indexed.id] and near_sales[indexed.id] > near_sales[waiting.id]


async def test_reindex_requeues_every_entry_and_rebuilds_the_vectors(db: PostgresDatabase,
                                                                     runtime: PgVectorRuntime) -> None:
    repo = PostgresEntryRepository(db)
    await write(repo, *(fact(RED, f"Note {i} about the staging database.") for i in range(4)))
    await drain(runtime)
    await runtime.rebuild()
    assert await scalar(db, "SELECT count(*) FROM entry_vectors") == 0 and await runtime.backlog() == 4
    assert await drain(runtime) == 4
    assert await scalar(db, "SELECT count(*) FROM entry_vectors") == 4


async def test_the_background_task_applies_writes_of_this_and_other_servers(db: PostgresDatabase) -> None:
    vectors = PgVectorRuntime(db, model_files, load_wait_seconds=30, poll_seconds=0.2)
    vectors.start()
    try:
        mine = PostgresEntryRepository(db, on_vector_change=vectors.notify)
        theirs = PostgresEntryRepository(db)  # another server's writes: no notify here, found by polling
        (cat,) = await write(mine, fact(RED, "The cat sat on the mat."))
        (sales,) = await write(theirs, fact(RED, "Quarterly revenue grew eight percent."))
        with anyio.fail_after(60):
            while await vectors.backlog() or vectors.problem is not None:
                await anyio.sleep(0.05)
        hits, _ = await vectors.nearest("a feline on a rug", [RED], 2)
        assert [entry_id for entry_id, _ in hits] == [cat.id, sales.id]
    finally:
        await vectors.aclose()


async def test_without_a_model_searches_say_why_and_writes_wait_in_the_outbox(db: PostgresDatabase) -> None:
    def missing() -> ModelFiles:
        raise EmbedderUnavailable("embedding model file missing: /nowhere/model.onnx")

    vectors = PgVectorRuntime(db, missing, load_wait_seconds=5, poll_seconds=0.2)
    vectors.start()
    try:
        await write(PostgresEntryRepository(db, on_vector_change=vectors.notify), fact(RED, "The cat sat."))
        with pytest.raises(SemanticUnavailable, match="model file missing"):
            await vectors.nearest("cat", [RED], 5)
        assert vectors.problem == "semantic search unavailable: embedding model file missing: /nowhere/model.onnx"
        assert not await vectors.take_over()
        assert await vectors.backlog() == 1
    finally:
        await vectors.aclose()


async def test_a_write_acknowledged_by_one_server_is_found_by_meaning_through_another_at_once(
        db: PostgresDatabase, postgres_url: str) -> None:
    """Read-your-writes across servers: server A acknowledged the write and has not applied the
    outbox; server B's retrieval (keyword store + this runtime) finds it by meaning in-line."""
    from agent_memory.core.model.clock import utc_now
    from agent_memory.core.model.commands import Call
    from agent_memory.core.model.models import Caller, SystemType
    from agent_memory.core.recall.retrieval import RetrievalRequest, RetrievalService, RetrievalSettings
    from agent_memory.storage.postgres.audit import PostgresAuditLog
    from agent_memory.storage.postgres.search import PostgresRetrievalStore

    await write(PostgresEntryRepository(db), fact(RED, "Quarterly revenue grew eight percent."))
    b_db = PostgresDatabase(postgres_url, pool_size=4)
    await b_db.open()
    b_vectors = PgVectorRuntime(b_db, model_files)
    b_audit = PostgresAuditLog(b_db)
    b_audit.start()
    try:
        assert await b_vectors.take_over()
        await drain(b_vectors)  # B has caught up with everything so far...
        (cat,) = await write(PostgresEntryRepository(db), fact(RED, "The cat sat on the mat."))  # ...then A writes
        retrieval = RetrievalService(PostgresRetrievalStore(b_db), b_vectors, b_audit, RetrievalSettings(), utc_now)
        call = Call(Caller("alice", SystemType.SYS1, "red"), "req_pg_vectors")
        result = await retrieval.retrieve(call, RetrievalRequest(query="a feline resting on a rug", mode="semantic"))
        assert result.items[0].entry.id == cat.id and result.degraded == [] and result.keyword_only == 0
        assert await b_vectors.backlog() == 1  # found in-line, not applied
        await drain(b_vectors)
        result = await retrieval.retrieve(call, RetrievalRequest(query="a feline resting on a rug", mode="semantic"))
        assert result.items[0].entry.id == cat.id  # now from the index
    finally:
        await b_audit.aclose()
        await b_vectors.aclose()
        await b_db.close()


async def test_a_server_loading_another_model_neither_applies_nor_searches_until_reindex_switches(
        db: PostgresDatabase, runtime: PgVectorRuntime) -> None:
    repo = PostgresEntryRepository(db)
    (cat,) = await write(repo, fact(RED, "The cat sat on the mat."))
    await drain(runtime)  # the store's vectors are now the packaged model's
    packaged = default_model_files()

    def other_model() -> ModelFiles:  # the same files as a custom model: another identity
        return ModelFiles(model=packaged.model, tokenizer=packaged.tokenizer, verify=False)

    other = PgVectorRuntime(db, other_model)
    try:
        assert not await other.take_over()
        assert other.problem is not None and "run `agent-memory reindex` to switch" in other.problem
        with pytest.raises(SemanticUnavailable, match="made with the model all-MiniLM-L6-v2-int8"):
            await other.nearest("a feline", [RED], 5)
        await write(repo, fact(RED, "Quarterly revenue grew eight percent."))
        with pytest.raises(EmbedderUnavailable, match="reindex"):
            await other.apply_pending()
        assert await other.backlog() == 1  # left for a server with the store's model

        await other.rebuild()  # reindex by the other model: the store switches to it
        assert other.problem is None and await other.backlog() == 3  # both entries, and the change still queued
        with pytest.raises(vectors_model.ModelMismatch):
            await runtime.apply_pending()  # the first server must not mix its vectors in any more
        assert await drain(other) == 3 and other.embedded == 2  # one embedding per entry
        hits, _ = await other.nearest("a feline on a rug", [RED], 1)
        assert hits[0][0] == cat.id
    finally:
        await other.aclose()
