"""`agent-memory export` and `import`: every field of every entry, round trip lossless (the line
format is `contracts/export_lines.py`).

Export reads entries in storage order (the order they were written, which retrieval's neighbour
smoothing relies on). Import takes the entries read from the lines, checks what only the store can
tell (references, an id not already stored, a key not held) and inserts them as they are (ids,
versions, etags, dates kept), queues them for the vector index and audits each one (tool
`import`). A bad line is reported with its line number; `on_error="abort"` (the default) imports
nothing when any line is bad, `"skip"` imports the others. A backup is restored as it was
exported: its text is not redacted again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agent_memory.application.import_writer import ImportFailed, Unwind, import_event, run_batch
from agent_memory.core.access.visibility import namespace_area
from agent_memory.core.memories.entry_checks import misplaced_reference
from agent_memory.core.memories.writes import store_new
from agent_memory.core.model.clock import format_ts, utc_now
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.model.models import Entry, Scope
from agent_memory.core.ports import EntryRepository, OperatorStore, WriteTransaction
from agent_memory.core.ports.failures import FailureReader

BATCH = 500


@dataclass
class ImportReport:
    read: int = 0
    imported: int = 0
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line number, why)


async def export_entries(store: OperatorStore, write: Callable[[Entry], None], *, scope: str | None = None,
                         namespace: str | None = None, cascade: bool = False) -> int:
    """`write` every entry (of `scope` and `namespace` when given) in storage order; returns how many."""
    area = namespace_area(Scope(scope) if scope else None, namespace or None, cascade=cascade) \
        if scope or namespace else None
    written, last = 0, 0
    while True:  # pages in storage order, so a big store never sits in memory at once
        page = await store.entries_after(area, last, BATCH)
        if not page:
            return written
        for _, entry in page:
            write(entry)
        written += len(page)
        last = page[-1][0]


async def import_entries(repo: EntryRepository, store: OperatorStore, parsed: list[tuple[int, Entry]],
                         report: ImportReport, *, failures: FailureReader, on_error: str = "abort",
                         progress: Callable[[ImportReport], None] | None = None) -> ImportReport:
    """Store `parsed` (numbered entries read from an export, `contracts/export_lines.py`, whose bad
    lines `report` holds already) as they are, after checking them against the store: an id not
    already stored, references in the same place, a key not held. None is stored when any line is
    bad and `on_error` is "abort".

    Raises: ImportFailed when the store stops taking entries (a full disk, a lost connection): the
    entries of earlier batches stay."""
    request_id = new_request_id()
    stored = await store.stored_ids([entry.id for _, entry in parsed])
    report.bad += [(number, f"id {entry.id} is already stored") for number, entry in parsed if entry.id in stored]
    parsed = [(number, entry) for number, entry in parsed if entry.id not in stored]
    parsed = await _references_checked(repo, parsed, report)
    report.bad.sort()
    if report.bad and on_error == "abort":
        return report
    for start in range(0, len(parsed), BATCH):
        at = format_ts(utc_now())

        def work(tx: WriteTransaction, batch: list[tuple[int, Entry]], at: str = at) -> list[tuple[int, str]]:
            problems = []
            for number, entry in batch:
                if tx.get(entry.id) is not None:
                    problems.append((number, f"id {entry.id} is already stored"))
                    continue
                holder = tx.key_holder(entry) if entry.key is not None and not entry.conflict else None
                if holder is not None:
                    problems.append((number, f"key {entry.key!r} is already held by entry {holder} in "
                                             f"{entry.scope.value} {entry.namespace}"))
                    continue
                store_new(tx, entry, import_event(at, request_id, entry, line=number))
            failed = {number for number, _ in problems}
            done = [entry.id for number, entry in batch if number not in failed]
            if done:
                tx.mark_reflected(done, at)
            if problems and on_error == "abort":
                raise _Abort(problems)
            return problems

        batch = parsed[start:start + BATCH]
        try:
            problems, refused = await run_batch(repo, batch, work, failures=failures, carry_on=on_error != "abort")
        except _Abort as abort:
            report.bad += abort.problems
            return report
        except ImportFailed as exc:
            raise ImportFailed(f"{exc}; {report.imported} entries were imported before") from None
        report.bad += [(number, why) for number, _, why in refused]
        if refused and on_error == "abort":
            return report
        report.imported += len(batch) - len(refused) - len(problems or [])
        if progress is not None:
            progress(report)
    return report


async def _references_checked(repo: EntryRepository, parsed: list[tuple[int, Entry]], report: ImportReport
                              ) -> list[tuple[int, Entry]]:
    """`parsed` but the entries whose `conflict_of` or `superseded_by` names an entry of the store
    or of the import in another place (reported as bad)."""
    known = {entry.id: entry for _, entry in parsed}
    wanted = sorted({ref for _, entry in parsed for ref in (entry.conflict_of, entry.superseded_by)
                     if ref is not None and ref not in known})
    known |= await _stored(repo, wanted)
    kept = []
    for number, entry in parsed:
        if (why := misplaced_reference(entry, known)) is not None:
            report.bad.append((number, why))
        else:
            kept.append((number, entry))
    return kept


async def _stored(repo: EntryRepository, ids: Sequence[str]) -> dict[str, Entry]:
    found: dict[str, Entry] = {}
    for start in range(0, len(ids), BATCH):
        found |= await repo.get_many(ids[start:start + BATCH])
    return found


class _Abort(Unwind):
    def __init__(self, problems: list[tuple[int, str]]) -> None:
        super().__init__("abort")
        self.problems = problems
