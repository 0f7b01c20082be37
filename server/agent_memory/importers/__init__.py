"""Imports into agent-memory from other memory stores and from plain notes.

One reader module per format (pure: input in, `Draft`s and `Bad`s out) and `placement` (where a
draft lands and the entry it becomes). The command (`cli/imports.py`) hands the entries to the
application's import use case (`application/import_writer.py`: checks, insert, outbox, audit).
`export` lines are read by `contracts/export_lines.py` and restored by `application/transfer.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the readers are imported when used: the command line parses without them
    from agent_memory.importers.drafts import Bad, Draft

FORMATS = ("export", "notes", "markdown", "kg-jsonl", "mem0", "basic-memory", "memorynode")
FOLDER_FORMATS = ("markdown", "basic-memory")


def read_lines(fmt: str, lines: Iterable[str]) -> Iterator[Draft | Bad]:
    """Drafts of a line-based format (`notes`, `kg-jsonl`, `mem0`, `memorynode`) from its lines."""
    if fmt == "notes":
        from agent_memory.importers.notes import read_notes

        return read_notes(lines)
    if fmt == "kg-jsonl":
        from agent_memory.importers.kg_jsonl import read_kg_jsonl

        return read_kg_jsonl(lines)
    if fmt == "mem0":
        from agent_memory.importers.mem0 import read_mem0

        return read_mem0("".join(lines))
    if fmt == "memorynode":
        from agent_memory.importers.memorynode import read_memorynode

        return read_memorynode("".join(lines))
    raise ValueError(f"{fmt} is not a line format")


def read_folder(fmt: str, root: Path, max_chars: int) -> Iterator[Draft | Bad]:
    """Drafts of a folder format (`markdown`, `basic-memory`) from a folder or one file."""
    if fmt == "markdown":
        from agent_memory.importers.markdown import read_markdown

        return read_markdown(root, max_chars)
    if fmt == "basic-memory":
        from agent_memory.importers.basic_memory import read_basic_memory

        return read_basic_memory(root, max_chars)
    raise ValueError(f"{fmt} is not a folder format")
