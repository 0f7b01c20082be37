"""Ports for records: entries and their write transaction, audit, sessions, pruning."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from agent_memory.core.model.areas import Area
from agent_memory.core.model.cursor import Position
from agent_memory.core.model.models import AuditEvent, Entry, ListFilters

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ListQuery:
    """One page's worth of a list: an area, the filters, and the time that decides expiry."""

    area: Area  # one namespace (or its subtree); agent scope pinned to the caller's own entries in its team
    filters: ListFilters
    now: str


class WriteTransaction(Protocol):
    """The inside of one short write transaction. Synchronous on purpose: a transaction body
    does no I/O of its own and never waits on anything but the database, so it can run in one
    piece next to the database and is never left half-done by a cancelled task."""

    def get(self, entry_id: str) -> Entry | None: ...

    def insert(self, entry: Entry) -> None: ...

    def upsert_keyed(self, entry: Entry) -> Entry | None:
        """Insert `entry` (which has a key) or update the entry its key names for its writer (its
        owner) instead (version + 1, `entry`'s etag). A key is held per (scope, namespace, team)
        and slot: the shared slot for entries without a read list, the owner's own for entries
        with one. Without a read list, `entry` updates first the writer's own read-listed holder,
        else the newest read-listed holder whose list names the writer, else the shared slot's
        holder; with one, the holder in the writer's own slot. Each step one statement, atomic
        through the unique index on keys; an entry the writer may not read is never updated (nor
        stops the create). Returns the stored entry; None when the holder is another agent's
        agent-scope entry (nothing changed)."""
        ...

    def key_holder(self, entry: Entry) -> str | None:
        """The id of another non-conflict entry holding `entry`'s key in the slot `entry` would hold
        it in (its (scope, namespace, team), and its owner's slot when it has a read list)."""
        ...

    def replace(self, entry: Entry, *, expected_etag: str) -> bool:
        """Compare-and-swap: store `entry` only if the stored etag is still `expected_etag`
        (and its version is `entry.version - 1`)."""
        ...

    def delete(self, entry_id: str, *, expected_etag: str) -> bool: ...

    def has_pending_conflict(self, entry_id: str) -> bool:
        """Whether a conflict entry refers to this entry (it must then stay until reconciled)."""
        ...

    def audit(self, event: AuditEvent) -> None: ...

    def mark_reflected(self, entry_ids: Sequence[str], at: str) -> None:
        """Move the reflection marks of these session turns' sessions past them (imported turns
        were reflected where they came from)."""

    def enqueue_vector(self, entry: Entry, op: str) -> None:
        """Queue the entry's vector change ('upsert' or 'delete') in this same transaction, so the
        derived vector index can always catch up with what committed."""
        ...


class EntryRepository(Protocol):
    async def transact(self, work: Callable[[WriteTransaction], T]) -> T:
        """Run `work` in one write transaction: committed if it returns, rolled back if it raises
        (the exception propagates)."""
        ...

    async def get_many(self, entry_ids: Sequence[str]) -> dict[str, Entry]: ...

    async def list_page(self, query: ListQuery, after: Position | None, limit: int) -> list[Entry]:
        """Entries matching `query`, newest first (created_at, id), strictly after `after`."""
        ...


class AuditSink(Protocol):
    """Records audit events that are not part of a write transaction (reads, denials)."""

    async def record(self, event: AuditEvent) -> None: ...

    def trouble(self) -> str | None:
        """Why events are not being written now (said in `degraded`), else None."""
        ...


@dataclass(frozen=True, slots=True)
class SessionKey:
    """One session of one agent in one team: its turns live in the agent's own namespace (its id,
    or a namespace under it such as a project's `<agent_id>/<project>`), owned by that agent, in
    that team (an agent id reused in another team never sees them)."""

    agent_id: str
    team: str
    session_id: str
    namespace: str = ""  # empty: the agent's id

    @property
    def home(self) -> str:
        """The namespace the session's turns, summaries and reflections live in."""
        return self.namespace or self.agent_id


@dataclass(frozen=True, slots=True)
class Mark:
    """How far a session has been reflected: the storage position of the last turn distilled, and
    when (turns written after that time count as new even if a position was reused)."""

    position: int = 0
    at: str = ""


class SessionTransaction(WriteTransaction, Protocol):
    def mark_compacted(self, entry_ids: Sequence[str]) -> int:
        """Mark session turns compacted (kept, listable, out of retrieval); returns how many."""
        ...

    def move_reflection_mark(self, key: SessionKey, expected: int, new: int, at: str) -> bool:
        """Compare-and-set the session's reflection watermark (a turn's storage position): False
        when another reflection moved it first."""
        ...

    def move_kept_mark(self, key: SessionKey, expected: int, new: int) -> bool:
        """Compare-and-set how far the session's turns were carried into long-term memory (a
        turn's storage position; turns past it are never pruned): False when another keeper
        moved it first."""
        ...


@dataclass(frozen=True, slots=True)
class SessionRef:
    namespace: str
    session_id: str
    owner_agent_id: str
    team: str


class SessionStore(Protocol):
    async def transact(self, work: Callable[[SessionTransaction], T]) -> T: ...

    async def session_turns(self, key: SessionKey, *, after: Mark | None = None,
                            compacted: bool | None = None) -> list[tuple[int, Entry]]:
        """The session's turns (not its summaries), oldest first, with their storage positions;
        with `after`, only those written after that mark."""
        ...

    async def uncompacted_chars(self, key: SessionKey) -> int: ...

    async def compacted_through(self, key: SessionKey) -> int:
        """How many of the session's turns earlier compactions covered: the highest position a
        compaction summary names (tag `turns:<first>-<last>`), or its number of compacted turns if
        higher. The next compaction numbers its turns from here."""
        ...

    async def reflection_mark(self, key: SessionKey) -> Mark: ...

    async def digested_through(self, key: SessionKey) -> int:
        """The highest turn number the session's long-term digests cover (0: none); the next digest
        numbers its turns from here."""
        ...

    async def kept_mark(self, key: SessionKey) -> int:
        """How far the session's turns were carried into long-term memory (0: not at all)."""
        ...

    async def reflections(self, agent_id: str, team: str, namespace: str = "") -> list[Entry]:
        """Facts and rules earlier reflections stored in the agent namespace (for de-duplication)."""
        ...

    async def sessions_to_reflect(self, limit: int) -> list[SessionRef]:
        """Sessions with turns written after their reflection mark (oldest activity first)."""
        ...


@dataclass(frozen=True, slots=True)
class PrunePolicy:
    now: str
    max_entries_per_namespace: int
    retention_cutoffs: dict[str, str]  # layer -> entries last updated before this go (absent: kept)


@dataclass(frozen=True, slots=True)
class Victim:
    entry_id: str
    scope: str
    namespace: str
    etag: str
    reason: str  # expired | retention | over_limit | erase
    # A session turn past its session's kept mark: what it said is not in long-term memory yet, so
    # it is not deleted until the session is kept (core/sessions/keeping.py).
    held: SessionRef | None = None


class Keeper(Protocol):
    async def keep(self, sessions: Iterable[SessionRef]) -> int:
        """Carry these sessions' turns into long-term memory (distilled and digested) so they may
        be pruned; returns how many sessions were kept now. Failures are reported, not raised."""
        ...


class PruneStore(Protocol):
    async def transact(self, work: Callable[[WriteTransaction], T]) -> T: ...

    async def prune_plan(self, policy: PrunePolicy, partitions: Sequence[tuple[str, str]] | None) -> list[Victim]:
        """What pruning would delete now (all partitions, or only those given), in deletion order.
        Never pending conflict entries, nor entries that pending conflicts refer to."""
        ...

    async def namespace_entries(self, area: Area, session_id: str | None = None) -> list[Victim]:
        """Every entry inside `area` (a namespace, and with its subtree, every namespace under it);
        with `session_id`, only those of that session."""
        ...
