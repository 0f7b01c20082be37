"""What differs between the stores' SQL, as the repository frame asks for it.

Both databases hand the frame the same connection shape: `db.read(work, snapshot=...)` and
`db.transact(work)` run `work(connection)` on a worker thread, and `connection.execute(sql,
params)` returns a cursor (sqlite3's or psycopg's). `snapshot` asks PostgreSQL for one
repeatable-read snapshot; SQLite's reader runs the statements one after another as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, Protocol, TypeVar

from agent_memory.core.models import AuditEvent, Entry
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
    row_to_entry: Callable[[tuple[Any, ...]], Entry]
    # The entry and audit statements (`agent_memory.storage.entry_rows` builds the entry ones).
    select_entry: ClassVar[str]
    insert_entry: ClassVar[str]
    update_entry: ClassVar[str]
    upsert_keyed: ClassVar[str]
    key_holder: ClassVar[str]
    insert_audit: ClassVar[str]
    entry_params: Callable[[Entry], tuple[object, ...]]
    update_params: Callable[[Entry, str], tuple[object, ...]]
    audit_params: Callable[[AuditEvent], tuple[object, ...]]

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
