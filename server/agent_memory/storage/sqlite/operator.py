"""What operator commands and inspection read from SQLite (the `OperatorStore` port; the queries
are `agent_memory.storage.frame.operator`): entries in rowid order, and the files' size on disk."""

from __future__ import annotations

from pathlib import Path

from agent_memory.storage.frame.operator import OperatorFrame
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.dialect import SQLITE


class SqliteOperatorStore(OperatorFrame):
    dialect = SQLITE
    position = "rowid"
    flag_counts = "SUM(compacted), SUM(conflict)"

    def __init__(self, db: Database, sqlite_file: str) -> None:
        super().__init__(db)
        self._file = sqlite_file

    async def storage_bytes(self) -> int | None:
        if not self._file or self._file == ":memory:":
            return None
        base = Path(self._file)
        return sum(_size(base.with_name(base.name + suffix)) for suffix in ("", "-wal", "-shm"))


def _size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else 0
