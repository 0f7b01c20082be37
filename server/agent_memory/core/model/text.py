"""The one rule for text the stores hold, on SQLite and PostgreSQL alike: valid Unicode without
NUL. A NUL (U+0000) is refused because PostgreSQL text cannot hold it (SQLite can, so allowing it
would make a store that cannot move); a lone surrogate (U+D800..U+DFFF) because it cannot be
written as UTF-8 at all (stored, exported, logged or answered). Every edge applies it: the MCP
tools, the console API (bodies, query strings and paths), every importer and the command line,
so such text never reaches a store. The audit, which must record even a refused request, keeps
what it is given through `storable`, marked as changed."""

from __future__ import annotations

import re

from agent_memory.core.model.errors import InvalidParams

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
MAX_FIELD_NAME_CHARS = 64


def text_fault(text: str) -> str | None:
    """Why `text` cannot be stored ("holds a NUL character (U+0000)", "holds a lone surrogate
    (U+D800..U+DFFF)"), or None when it can."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "holds a NUL character (U+0000), which memory text cannot hold"
    return "holds a lone surrogate (U+D800..U+DFFF): text must be valid Unicode"


def is_storable(text: str) -> bool:
    return _UNSTORABLE.search(text) is None


def storable(text: str) -> str:
    """`text` as a store can hold it: NUL written as the escape `\\x00`, a lone surrogate as
    `\\udXXX`, everything else unchanged. For records that must be kept whatever they hold (the
    audit); never for memory content, which is refused instead."""
    if _UNSTORABLE.search(text) is None:
        return text
    return text.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


def field_label(name: str) -> str:
    """A client-chosen key as it may appear in a message: cut to MAX_FIELD_NAME_CHARS and made
    storable."""
    if len(name) > MAX_FIELD_NAME_CHARS:
        name = name[:MAX_FIELD_NAME_CHARS] + "..."
    return storable(name)


def field_path(loc: tuple[int | str, ...], prefix: str = "") -> str:
    """`items[0].tags[2]` from a location; "arguments" for the whole input."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            name = field_label(str(part))
            path = f"{path}.{name}" if path else name
    return path or "arguments"


def check_text(data: object, prefix: str = "") -> None:
    """Refuse text the stores cannot hold (see `text_fault`), in keys or values, at any depth.

    Raises:
        InvalidParams: naming the first field that holds such text (`details.field`), never
            echoing the text.
    """
    stack: list[tuple[object, tuple[int | str, ...]]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if isinstance(value, str):
            fault = text_fault(value)
            if fault is not None:
                path = field_path(loc, prefix)
                raise InvalidParams(f"{path} {fault}", field=path)
        elif isinstance(value, dict):
            for key, child in reversed(list(value.items())):
                if isinstance(key, str) and (fault := text_fault(key)) is not None:
                    path = field_path((*loc, key), prefix)
                    raise InvalidParams(f"field name {path} {fault}", field=path)
                stack.append((child, (*loc, key)))
        elif isinstance(value, list | tuple):
            stack.extend((child, (*loc, index)) for index, child in reversed(list(enumerate(value))))


_UNSTORABLE_SURROGATE = re.compile("[\ud800-\udfff]")


def not_utf8(text: str) -> bool:
    """Whether input text read with `errors="surrogateescape"` held bytes that are not UTF-8 (kept
    as lone surrogates: valid UTF-8 never decodes to one; an escape `\\ud800` in JSON is still six
    plain characters here)."""
    return _UNSTORABLE_SURROGATE.search(text) is not None
