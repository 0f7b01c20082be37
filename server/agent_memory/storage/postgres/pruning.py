"""What pruning and erase delete on PostgreSQL (implements `PruneStore`; the queries are
`agent_memory.storage.frame.pruning`, read from one repeatable-read snapshot)."""

from __future__ import annotations

from agent_memory.storage.frame.pruning import PruneFrame
from agent_memory.storage.postgres.dialect import POSTGRES
from agent_memory.storage.postgres.entries import PostgresEntryRepository


class PostgresPruneStore(PostgresEntryRepository, PruneFrame):
    dialect = POSTGRES
    kept = "k.kept_turn >= COALESCE(entries.turn_seq, 0)"
