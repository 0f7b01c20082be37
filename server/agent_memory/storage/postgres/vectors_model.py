"""Which embedding model made the vectors of a PostgreSQL store. Every server applies the outbox,
so two servers configured with different models would otherwise fill one table with vectors of
two spaces, and every cosine across them would be noise. The model is recorded in `server_meta`
by the first server to apply anything; a server loading another model neither applies nor
searches (`degraded` says why) until `reindex` switches the store to its model."""

from __future__ import annotations

import psycopg

MODEL_KEY = "embedding_model"
_SAME_MODEL_SUFFIXES = (" (int8 compute)",)  # the same weights multiplied another way: the same space


class ModelMismatch(RuntimeError):
    """This server's model is not the one that made the stored vectors (the message says what to do)."""


def identity(embedder_name: str) -> str:
    for suffix in _SAME_MODEL_SUFFIXES:
        embedder_name = embedder_name.removesuffix(suffix)
    return embedder_name


def agree(conn: psycopg.Connection, model: str) -> None:
    """Inside a transaction: record `model` if no model is recorded yet, and hold the record
    share-locked until the transaction ends (a `reindex` switching models waits for the batch).

    Raises: ModelMismatch."""
    conn.execute("INSERT INTO server_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
                 (MODEL_KEY, model))
    recorded = conn.execute("SELECT value FROM server_meta WHERE key = %s FOR SHARE", (MODEL_KEY,)).fetchone()[0]
    if recorded != model:
        raise ModelMismatch(f"the stored vectors were made with the model {recorded}, this server loads {model}: "
                            "give every server the same embedding model, or run `agent-memory reindex` to switch")


def switch(conn: psycopg.Connection, model: str) -> None:
    """Inside `reindex`'s transaction: the vectors about to be rebuilt are this model's."""
    conn.execute("INSERT INTO server_meta (key, value) VALUES (%s, %s) "
                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (MODEL_KEY, model))
