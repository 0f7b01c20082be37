"""`--from basic-memory`: a basic-memory project folder (Markdown notes, basic-memory's NOTE-FORMAT).

One entry per note, its text kept as written (observations `- [category] text #tag (context)` and
relations `- relation_type [[Target]]` stay readable lines). Tags: the front matter's `tags`,
`type:<type>` (default `note`), `permalink:<permalink>`, each observation's category and its
inline `#tags`. Dates: front matter `created`/`modified`, else the file's modification time (as
basic-memory does). Title: front matter `title`, else the file name. Identity: the permalink, else
the file's path, so a note moved but keeping its permalink is still the same entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from agent_memory.importers.drafts import Bad, Draft, tag_list
from agent_memory.importers.frontmatter import tag_values
from agent_memory.importers.markdown import Note, note_drafts, read_notes_in

# `- [category] content`; not a task box (`[ ]`, `[x]`, `[-]`) and not a link `[text](url)`.
_OBSERVATION = re.compile(r"^\s*[-*+]\s+\[([^\[\]()]+)\]\s+(.+)$")
_TASK_BOX = re.compile(r"^[ xX\-/>?]$")
_INLINE_TAG = re.compile(r"(?<![\w#])#([^\s#()\[\]]+)")


def observations(body: str) -> list[tuple[str, list[str]]]:
    """Each observation's category and inline tags, in order."""
    found = []
    for line in body.splitlines():
        match = _OBSERVATION.match(line)
        if not match or _TASK_BOX.match(match.group(1)) or match.group(2).startswith("("):
            continue
        found.append((match.group(1).strip(), _INLINE_TAG.findall(match.group(2))))
    return found


def note_tags(note: Note) -> tuple[str, ...]:
    kind = str(note.meta.get("type") or "note")
    permalink = note.meta.get("permalink")
    found = observations(note.body)
    return tag_list(tag_values(note.meta.get("tags")), [f"type:{kind}"],
                    [f"permalink:{permalink}"] if permalink else [],
                    [category for category, _ in found], [tag for _, tags in found for tag in tags])


def read_basic_memory(root: Path, max_chars: int) -> Iterator[Draft | Bad]:
    for note in read_notes_in(root):
        if isinstance(note, Bad):
            yield note
            continue
        title = str(note.meta.get("title") or Path(note.path).stem).strip()
        permalink = note.meta.get("permalink")
        key = f"permalink:{permalink}" if permalink else f"path:{note.path}"
        yield from note_drafts(note, title, note_tags(note), key, max_chars)
