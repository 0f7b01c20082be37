"""YAML front matter of a Markdown file: the block between a first line `---` and the next `---`."""

from __future__ import annotations

import yaml

MAX_FRONT_MATTER_CHARS = 64_000


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """The front matter as a mapping (empty when there is none) and the text after it.

    Raises:
        ValueError: the block is not closed, not YAML (the message gives the file's line), or not
            a mapping.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            block = "".join(lines[1:index])
            body = "".join(lines[index + 1:])
            break
    else:
        raise ValueError("front matter opened with --- on line 1 is never closed")
    if len(block) > MAX_FRONT_MATTER_CHARS:
        raise ValueError(f"front matter is longer than {MAX_FRONT_MATTER_CHARS} characters")
    try:
        if any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(block, Loader=yaml.SafeLoader)):
            # `*name` repeats a value by reference: a few lines can stand for billions of values
            raise ValueError("front matter uses a YAML alias (*name); write the value out instead")
        meta = yaml.safe_load(block)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" on line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "unreadable"
        raise ValueError(f"front matter is not valid YAML{where} ({problem})") from None
    if meta is None:
        return {}, body
    if not isinstance(meta, dict):
        raise ValueError("front matter is not a mapping of key: value lines")
    return {str(key): value for key, value in meta.items()}, body


def tag_values(raw: object) -> list[str]:
    """Tags as front matter writes them: a list, or one comma-separated string; a leading `#` dropped."""
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    found = []
    for item in items:
        if item is None or isinstance(item, dict | list):
            continue
        found += [part.strip().lstrip("#").strip() for part in str(item).split(",")]
    return [tag for tag in found if tag]
