"""Session turns, reflection marks and earlier reflections on PostgreSQL (implements
`SessionStore`; the queries are `agent_memory.storage.frame.sessions`). A turn's storage position
is its turn number (`turn_seq`), not `seq`: turn numbers of a session commit in order, so a mark
never passes over a turn another server commits late (storage/postgres/turn_numbers.py says why
and how); an edited turn was renumbered, so it counts as new.
"""

from __future__ import annotations

from agent_memory.storage.frame.sessions import SessionColumns, SessionFrame
from agent_memory.storage.postgres.dialect import POSTGRES
from agent_memory.storage.postgres.entries import PostgresEntryRepository


class PostgresSessionStore(PostgresEntryRepository, SessionFrame):
    dialect = POSTGRES
    # Every turn has a number (the trigger gives one to each); COALESCE only guards the type.
    columns = SessionColumns(
        position="COALESCE(turn_seq, 0)", after="turn_seq > %s", after_params=1, order="created_at, seq",
        mark="last_turn", kept="kept_turn",
        unreflected="MAX(e.turn_seq) > COALESCE(MAX(m.last_turn), 0)", newest="MAX(e.seq)")
