"""YAML front matter of a Markdown file: the block between a first line `---` and the next `---`."""

from __future__ import annotations

import yaml

MAX_FRONT_MATTER_CHARS = 64_000
MAX_DEPTH = 32  # lists and mappings inside each other; real front matter uses two or three


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """The front matter as a mapping (empty when there is none) and the text after it.

    Raises:
        ValueError: the block is not closed, not YAML (the message gives the file's line), uses
            an alias, is nested too deeply, or is not a mapping.
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
        _check_shape(block)
        meta = yaml.safe_load(block)
    except RecursionError:  # PyYAML recurses per level: a depth under the limit may still exhaust the stack
        raise ValueError(f"front matter is nested more than {MAX_DEPTH} levels deep") from None
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


def _check_shape(block: str) -> None:
    """Refuse what YAML could make expensive before it is built: an alias (`*name` repeats a value
    by reference: a few lines can stand for billions of values) and nesting deeper than MAX_DEPTH
    (building it recurses once per level). The events are read without recursion.

    Raises:
        ValueError: saying which. yaml.YAMLError: not YAML.
    """
    depth = 0
    for event in yaml.parse(block, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise ValueError("front matter uses a YAML alias (*name); write the value out instead")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise ValueError(f"front matter is nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


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
