"""Storing placed imports: each new entry inserted, queued for the vector index (the outbox, as
every write is) and audited (tool `import`, one row per entry, never content), in transactions of
`batch` entries; an id already stored (an earlier import of the same source) is skipped."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent_memory.core.clock import format_ts, utc_now
from agent_memory.core.ids import new_request_id
from agent_memory.core.models import AuditEvent, Entry
from agent_memory.core.ports import EntryRepository, OperatorStore, WriteTransaction


@dataclass
class ImportTally:
    """What an import did: items read (entries and bad ones), entries written, entries skipped as
    already stored or repeated in the input (where, where first seen), bad items (where, why)."""

    read: int = 0
    imported: int = 0
    present: int = 0
    repeated: list[tuple[str, str]] = field(default_factory=list)
    bad: list[tuple[str, str]] = field(default_factory=list)


async def write_entries(repo: EntryRepository, store: OperatorStore, placed: list[tuple[str, Entry]],
                        tally: ImportTally, *, fmt: str, batch: int = 500,
                        progress: Callable[[ImportTally], None] | None = None) -> ImportTally:
    """Insert `placed` ((where, entry) pairs, ids unique) except those already stored."""
    request_id = new_request_id()
    present = await store.stored_ids([entry.id for _, entry in placed])
    tally.present += sum(1 for _, entry in placed if entry.id in present)
    fresh = [(where, entry) for where, entry in placed if entry.id not in present]
    for start in range(0, len(fresh), batch):
        at = format_ts(utc_now())

        def work(tx: WriteTransaction, part: list[tuple[str, Entry]] = fresh[start:start + batch],
                 at: str = at) -> int:
            written = 0
            for where, entry in part:
                if tx.get(entry.id) is not None:  # stored meanwhile by another import
                    continue
                tx.insert(entry)
                tx.enqueue_vector(entry, "upsert")
                tx.audit(AuditEvent(at=at, request_id=request_id, agent_id="operator", team="", system_type="sys5",
                                    tool="import", action="import", scope=entry.scope.value,
                                    namespace=entry.namespace, entry_id=entry.id, outcome="ok",
                                    details={"format": fmt, "where": where}))
                written += 1
            return written

        written = await repo.transact(work)
        tally.imported += written
        tally.present += min(batch, len(fresh) - start) - written
        if progress is not None:
            progress(tally)
    return tally
