"""The writes every change of an entry makes in its transaction: the row, the vector index's
outbox (so the derived index can always catch up with what committed) and the audit row."""

from __future__ import annotations

from agent_memory.core.model.models import AuditEvent, Entry
from agent_memory.core.ports import WriteTransaction


def store_new(tx: WriteTransaction, entry: Entry, event: AuditEvent) -> None:
    """A new entry: inserted, queued to be embedded, audited by `event`."""
    tx.insert(entry)
    tx.enqueue_vector(entry, "upsert")
    tx.audit(event)


def store_change(tx: WriteTransaction, current: Entry, patched: Entry, event: AuditEvent) -> bool:
    """`current` replaced by `patched` (compare-and-swap on `current`'s etag) and audited by
    `event`; queued to be embedded again only when its content changed (tags, priority,
    confidence, layer, expiry, domain and read list are not embedded: the stored vector stays).

    Returns: False when the entry changed since `current` was read (nothing was written)."""
    if not tx.replace(patched, expected_etag=current.etag):
        return False
    if patched.content != current.content:
        tx.enqueue_vector(patched, "upsert")
    tx.audit(event)
    return True
