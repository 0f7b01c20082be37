"""Storing imported entries: each new entry inserted, queued for the vector index (the outbox, as
every write is) and audited (tool `import`, one row per entry, never content), in transactions of
`batch` entries; an id already stored (an earlier import of the same source) is skipped. Secrets
in content and tags are redacted first (`core.memories.secrets`, unless `redact_secrets` is off).

Every entry is checked before it gets here, so a store refuses none; should one still be refused
(a rule a store has and the checks miss), the batch is not lost: each of its entries is tried
alone in a transaction that is rolled back, the ones the store refuses are reported as bad items
and the others stored (`run_batch`). A store that refuses entries for a reason of its own (a full
disk, a database held busy, a lost connection) stops the import with `ImportFailed`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from agent_memory.core.memories.secrets import Redactor
from agent_memory.core.memories.writes import store_new
from agent_memory.core.model.clock import format_ts, utc_now
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.model.models import AuditEvent, Entry
from agent_memory.core.model.text import storable
from agent_memory.core.ports import EntryRepository, OperatorStore, WriteTransaction
from agent_memory.core.ports.failures import EXPLANATIONS, FailureReader

K = TypeVar("K")
R = TypeVar("R")
Place = tuple[str, str, str | None]  # scope, namespace, team


class ImportFailed(Exception):
    """The store refused a batch for a reason of its own, not of its entries; the message says which."""


class Unwind(Exception):
    """Raised by a batch's work to roll its transaction back on purpose: passed on by `run_batch`."""


class _Probe(Unwind):
    pass


@dataclass
class ImportTally:
    """What an import did: items read (entries and bad ones), entries written, entries skipped as
    already stored or repeated in the input (where, where first seen), bad items (where, why), and
    per place (scope, namespace, team) the entries imported and found already stored."""

    read: int = 0
    imported: int = 0
    present: int = 0
    repeated: list[tuple[str, str]] = field(default_factory=list)
    bad: list[tuple[str, str]] = field(default_factory=list)
    landed: Counter[Place] = field(default_factory=Counter)
    found: Counter[Place] = field(default_factory=Counter)
    redacted: int = 0  # secrets replaced in the entries written


def place_of(entry: Entry) -> Place:
    return entry.scope.value, entry.namespace, entry.team


def import_event(at: str, request_id: str, entry: Entry, **details: object) -> AuditEvent:
    """The audit row of one imported entry (never its content): written by the operator."""
    return AuditEvent(at=at, request_id=request_id, agent_id="operator", team="", system_type="sys5", tool="import",
                      action="import", scope=entry.scope.value, namespace=entry.namespace, entry_id=entry.id,
                      outcome="ok", details=details)


def _failed(exc: Exception, failures: FailureReader) -> ImportFailed:
    reason = failures.reason(exc)
    return ImportFailed(EXPLANATIONS[reason] if reason else f"the store failed ({failures.detail(exc)})")


async def run_batch(repo: EntryRepository, part: list[tuple[K, Entry]],
                    work: Callable[[WriteTransaction, list[tuple[K, Entry]]], R], *, failures: FailureReader,
                    carry_on: bool = True) -> tuple[R | None, list[tuple[K, Entry, str]]]:
    """`work` over `part` in one transaction, and the entries the store refused (key, entry, why);
    `failures` (the store's) tells a refusal of the data from a failure of the store.

    When the store refuses the transaction for the data it was given, each entry is inserted
    alone in a transaction rolled back at once, to find the ones it refuses; `work` then runs over
    the others (unless not `carry_on` and some were refused: then nothing is stored and the
    result is None).

    Raises:
        ImportFailed: the store failed for a reason of its own (full, busy, unreachable).
        Unwind: as `work` raised it.
    """
    try:
        return await repo.transact(lambda tx: work(tx, part)), []
    except Unwind:
        raise
    except Exception as exc:  # noqa: BLE001 - told apart below: a driver's refusal, or the store's failure
        if not failures.refused_data(exc):
            raise _failed(exc, failures) from None
    refused: list[tuple[K, Entry, str]] = []
    for key, entry in part:
        try:
            await repo.transact(lambda tx, entry=entry: _try_insert(tx, entry))
        except _Probe:
            continue
        except Exception as exc:  # noqa: BLE001 - as above, for this entry alone
            if not failures.refused_data(exc):
                raise _failed(exc, failures) from None
            refused.append((key, entry, f"the store refused it ({failures.detail(exc)})"))
    if refused and not carry_on or len(refused) == len(part):
        return None, refused
    ids = {entry.id for _, entry, _ in refused}
    rest = [(key, entry) for key, entry in part if entry.id not in ids]
    try:  # the others (all of them again when none was refused alone)
        return await repo.transact(lambda tx: work(tx, rest)), refused
    except Unwind:
        raise
    except Exception as exc:  # noqa: BLE001 - refused again as a whole: not one entry's doing
        raise _failed(exc, failures) from None


def _try_insert(tx: WriteTransaction, entry: Entry) -> None:
    tx.insert(entry)
    tx.enqueue_vector(entry, "upsert")
    raise _Probe


async def write_entries(repo: EntryRepository, store: OperatorStore, placed: list[tuple[str, Entry]],
                        tally: ImportTally, *, fmt: str, failures: FailureReader, batch: int = 500,
                        progress: Callable[[ImportTally], None] | None = None,
                        redactor: Redactor) -> ImportTally:
    """Insert `placed` ((where, entry) pairs, ids unique) except those already stored.

    Raises:
        ImportFailed: the store stopped taking entries (what was written before stays).
    """
    request_id = new_request_id()
    present = await store.stored_ids([entry.id for _, entry in placed])
    for _, entry in placed:
        if entry.id in present:
            tally.present += 1
            tally.found[place_of(entry)] += 1
    todo = [(where, entry) for where, entry in placed if entry.id not in present]
    done = await redactor.aentries([entry for _, entry in todo])  # a large import off the event loop
    cleaned = [(where, entry, found) for (where, _), (entry, found) in zip(todo, done, strict=True)]
    fresh = [(where, entry) for where, entry, _ in cleaned]
    secrets = {entry.id: found for _, entry, found in cleaned}
    for start in range(0, len(fresh), batch):
        at = format_ts(utc_now())

        def work(tx: WriteTransaction, part: list[tuple[str, Entry]], at: str = at) -> list[Entry]:
            written = []
            for where, entry in part:
                if tx.get(entry.id) is not None:  # stored meanwhile by another import
                    continue
                store_new(tx, entry, import_event(at, request_id, entry, format=fmt, where=storable(where)))
                written.append(entry)
            return written

        part = fresh[start:start + batch]
        try:
            written, refused = await run_batch(repo, part, work, failures=failures)
        except ImportFailed as exc:
            raise ImportFailed(f"{exc}; {tally.imported} entries were imported before") from None
        written = written or []
        tally.bad += [(where, why) for where, _, why in refused]
        tally.imported += len(written)
        tally.redacted += sum(secrets[entry.id] for entry in written)
        tally.landed.update(place_of(entry) for entry in written)
        done = {entry.id for entry in written} | {entry.id for _, entry, _ in refused}
        for _, entry in part:
            if entry.id not in done:
                tally.present += 1
                tally.found[place_of(entry)] += 1
        if progress is not None:
            progress(tally)
    return tally
