"""`--from markdown`: a folder of Markdown files (`*.md`, `*.markdown`; folders and files whose name
starts with `.` are skipped), one entry per file.

The title is kept as the entry's first line (`# Title`): front matter `title`, else the file's
first heading, else its name. Front matter `tags` (also `categories`, `keywords`) become tags;
`created`/`date`/`created_at` and `updated`/`modified`/`updated_at`/`lastmod` become the dates
(else the file's modification time). A file longer than the content limit is split at its `#`
and `##` headings, one entry per section, each starting with the file's title.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.rules import normalise_timestamp
from agent_memory.importers.drafts import Bad, Draft, stamp_text, tag_list
from agent_memory.importers.frontmatter import split_front_matter, tag_values

SUFFIXES = (".md", ".markdown")
MAX_FILE_BYTES = 16 * 1024 * 1024  # a larger "note" is no note (and would be read whole into memory)
CREATED_KEYS = ("created", "date", "created_at")
UPDATED_KEYS = ("updated", "modified", "updated_at", "lastmod")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True, slots=True)
class Note:
    """One Markdown file, read: its path under the folder, front matter, text and file date."""

    path: str
    meta: dict[str, object]
    body: str
    modified: str


def markdown_files(root: Path) -> list[Path]:
    """Markdown files under `root` (or `root` itself), in path order, hidden ones skipped."""
    if root.is_file():
        return [root]
    return sorted(path for path in root.rglob("*") if path.suffix.lower() in SUFFIXES and path.is_file()
                  and not any(part.startswith(".") for part in path.relative_to(root).parts))


class Refused(Exception):
    """A file of the folder that is not read; the message says why."""


def read_file(path: Path, root: Path) -> tuple[str, str]:
    """The text and modification time (ISO) of the file at `path`, found under the folder `root`.
    Links are not followed (a folder someone else wrote could link to any file on this machine;
    `root` itself, named by the user, may be one), nor is anything but a regular file read.

    Raises:
        Refused: a link, not a regular file, or larger than MAX_FILE_BYTES.
        UnicodeDecodeError: not UTF-8. OSError: unreadable.
    """
    follow = path == root
    if not follow and path.is_symlink():
        raise Refused("a symbolic link; not followed (copy the file into the folder to import it)")
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link since it was listed
            raise Refused("a symbolic link; not followed (copy the file into the folder to import it)") from None
        raise
    with os.fdopen(fd, "rb") as source:
        info = os.fstat(source.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Refused("not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise Refused(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB ({info.st_size} bytes); split it "
                          "into smaller notes")
        data = source.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:  # grew since
        raise Refused(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; split it into smaller notes")
    return data.decode("utf-8"), datetime.fromtimestamp(info.st_mtime, UTC).isoformat()


def read_notes_in(root: Path) -> Iterator[Note | Bad]:
    base = root.parent if root.is_file() else root
    for path in markdown_files(root):
        name = path.relative_to(base).as_posix()
        try:
            text, modified = read_file(path, root)
        except Refused as exc:
            yield Bad(name, str(exc))
            continue
        except UnicodeDecodeError:
            yield Bad(name, "not UTF-8 text")
            continue
        except OSError as exc:
            yield Bad(name, f"unreadable ({exc.strerror})")
            continue
        if "\x00" in text:
            yield Bad(name, "holds NUL characters: not a text file")
            continue
        try:
            meta, body = split_front_matter(text)
        except ValueError as exc:
            yield Bad(name, str(exc))
            continue
        yield Note(name, meta, body, modified)


def front_matter_date(meta: dict[str, object], keys: tuple[str, ...]) -> str | None:
    """The first of `keys` present, as ISO text. Raises: ValueError naming the key when it is no date."""
    for key in keys:
        value = meta.get(key)
        if value in (None, ""):
            continue
        try:
            text = stamp_text(value)
            normalise_timestamp(text, key)
        except (ValueError, InvalidParams):
            raise ValueError(f"front matter {key}: {value!r} is not an ISO-8601 date or date-time") from None
        return text
    return None


def first_heading(body: str) -> str | None:
    for line in body.splitlines():
        if line.strip():
            match = _HEADING.match(line)
            return match.group(2) if match and len(match.group(1)) == 1 else None
    return None


def titled(title: str, body: str) -> str:
    """The text with `# title` as its first line (not repeated when the text already starts so)."""
    text = body.strip()
    if first_heading(text) == title:
        return text
    return f"# {title}\n\n{text}".strip()


def sections(body: str) -> list[str]:
    """The text cut before each `#` or `##` heading outside code fences; blank pieces dropped."""
    pieces, current, fenced = [], [], False
    for line in body.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match and len(match.group(1)) <= 2 and current:
            pieces.append("\n".join(current))
            current = []
        current.append(line)
    pieces.append("\n".join(current))
    return [piece.strip() for piece in pieces if piece.strip()]


def note_drafts(note: Note, title: str, tags: tuple[str, ...], key: str, max_chars: int) -> Iterator[Draft | Bad]:
    """One Draft for the note, or one per section when the whole is over `max_chars`."""
    try:
        created = front_matter_date(note.meta, CREATED_KEYS) or note.modified
        updated = front_matter_date(note.meta, UPDATED_KEYS) or note.modified
    except ValueError as exc:
        yield Bad(note.path, str(exc))
        return
    if not note.body.strip():
        yield Bad(note.path, "no text after the front matter")
        return
    whole = titled(title, note.body)
    if len(whole) <= max_chars:
        yield Draft(where=note.path, key=key, content=whole, tags=tags, created_at=created, updated_at=updated)
        return
    for number, piece in enumerate(sections(note.body), start=1):
        yield Draft(where=f"{note.path} section {number}", key=f"{key}#{number}", content=titled(title, piece),
                    tags=tags, created_at=created, updated_at=updated)


def read_markdown(root: Path, max_chars: int) -> Iterator[Draft | Bad]:
    for note in read_notes_in(root):
        if isinstance(note, Bad):
            yield note
            continue
        title = str(note.meta.get("title") or first_heading(note.body) or Path(note.path).stem).strip()
        tags = tag_list(tag_values(note.meta.get("tags")), tag_values(note.meta.get("categories")),
                        tag_values(note.meta.get("keywords")))
        yield from note_drafts(note, title, tags, f"path:{note.path}", max_chars)
