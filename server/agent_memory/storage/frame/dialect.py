"""What differs between the stores' SQL, as the repository frame asks for it.

Both databases hand the frame the same connection shape: `db.read(work, snapshot=...)` and
`db.transact(work)` run `work(connection)` on a worker thread, and `connection.execute(sql,
params)` returns a cursor (sqlite3's or psycopg's). `snapshot` asks PostgreSQL for one
repeatable-read snapshot; SQLite's reader runs the statements one after another as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, Protocol, TypeVar

from agent_memory.core.model.models import AuditEvent, Entry
from agent_memory.core.ports import Partition

T = TypeVar("T")


class Reader(Protocol):
    async def read(self, work: Callable[[Any], T], *, snapshot: bool = False) -> T: ...


class Dialect:
    """The fragments a store's SQL spells its own way; subclassed once per store."""

    mark: ClassVar[str]  # a parameter's placeholder
    true: ClassVar[str]  # the literals true and false (also conditions always / never true)
    false: ClassVar[str]
    batch: ClassVar[int]  # ids per IN (...) list where the frame splits long lists (0: no split)
    pin: ClassVar[str]  # a column prefix that keeps the planner off its index ("" where it needs none)

    def __init__(self, rows: Any, insert_audit: str, audit_params: Callable[[AuditEvent], tuple[object, ...]]) -> None:
        """Args:
            rows: the store's row module: its entry statements (`agent_memory.storage.entry_rows`
                builds them), parameters and row mapping.
            insert_audit, audit_params: the store's audit INSERT and an event's parameters.
        """
        self.row_to_entry: Callable[[tuple[Any, ...]], Entry] = rows.row_to_entry
        self.entry_params: Callable[[Entry], tuple[object, ...]] = rows.entry_params
        self.update_params: Callable[[Entry, str], tuple[object, ...]] = rows.update_params
        self.select_entry: str = rows.SELECT_ENTRY
        self.insert_entry: str = rows.INSERT_ENTRY
        self.update_entry: str = rows.UPDATE_ENTRY
        self.upsert_keyed: str = rows.UPSERT_KEYED
        self.listed_key_update: str = rows.LISTED_KEY_UPDATE
        self.key_holder: str = rows.KEY_HOLDER
        self.insert_audit = insert_audit
        self.audit_params = audit_params

    def flag(self, column: str, on: bool = True) -> str:
        """A condition on a boolean column: true when it is `on`."""
        raise NotImplementedError

    def in_list(self, column: str, values: Sequence[object]) -> tuple[str, list[object]]:
        """`column` is one of `values`, and its parameters."""
        raise NotImplementedError

    def in_partitions(self, partitions: Sequence[Partition]) -> tuple[str, list[object]]:
        """An entry (alias e) lies in one of `partitions`, and its parameters."""
        raise NotImplementedError

    def boolean(self, value: bool) -> object:
        """A boolean as a parameter."""
        raise NotImplementedError

    def tags_all(self, column: str, tags: Sequence[str]) -> tuple[str, list[object]]:
        """The tags in `column` include every one of `tags`, and its parameters."""
        raise NotImplementedError

    def tags_of(self, value: Any) -> list[str]:
        """A tags column's value as a list."""
        raise NotImplementedError

    def reader_clause(self, alias: str, reader: str) -> tuple[str, list[object]]:
        """An entry's read list admits `reader` (or it has none, or `reader` owns it)."""
        raise NotImplementedError

    def batches(self, values: Sequence[T]) -> Iterator[list[T]]:
        """`values` in lists of at most `batch` (one list, even empty, without a batch size)."""
        if not self.batch:
            yield list(values)
            return
        for start in range(0, len(values), self.batch):
            yield list(values[start:start + self.batch])
