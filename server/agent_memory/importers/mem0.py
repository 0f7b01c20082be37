"""`--from mem0`: memories exported from mem0, as `get_all` returns them: a JSON document (a list of
memories, `{"results": [...]}` from the open-source `Memory.get_all`, or the platform's paginated
`{"count", "next", "previous", "results"}`), or JSON lines with one memory a line.

A memory is `{"id", "memory", "user_id"?, "agent_id"?, "run_id"? (the platform: "session_id"?),
"app_id"?, "metadata"?, "categories"?, "created_at", "updated_at", "expiration_date"?, ...}`.
`memory` is the content; `user_id`, `agent_id` and `run_id` become namespaces under the target
(`<namespace>/user/<user_id>/agent/<agent_id>/run/<run_id>`, the parts present; characters a
namespace cannot hold become `_`) and tags (`user:<id>`, ...); `categories` and `metadata` become
tags (`<key>:<value>` for plain values); dates are kept; `expiration_date` becomes `expires_at`.
Identity: the mem0 id. Other fields (`hash`, `score`, ...) are ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from agent_memory.importers.drafts import Bad, Draft, json_lines, stamp_text, tag_list

OWNERS = (("user", ("user_id",)), ("agent", ("agent_id",)), ("run", ("run_id", "session_id")))
_NOT_NAMESPACE = re.compile(r"[^A-Za-z0-9._-]")


def segment(value: str) -> str:
    """An id as one namespace segment: other characters become `_`, at most 128 characters."""
    cleaned = _NOT_NAMESPACE.sub("_", value.strip())[:128]
    return "_" * len(cleaned) if set(cleaned) == {"."} else cleaned


def _owner_ids(record: dict) -> list[tuple[str, str]]:
    found = []
    for label, names in OWNERS:
        value = next((record[name] for name in names if record.get(name) not in (None, "")), None)
        if value is None:
            continue
        if not isinstance(value, str | int):
            raise ValueError(f"{names[0]} must be a string")
        found.append((label, str(value)))
    return found


def _metadata_tags(metadata: object) -> list[str]:
    if metadata is None:
        return []
    if not isinstance(metadata, dict):
        raise ValueError("metadata must be an object")
    tags = []
    for key, value in metadata.items():
        values = value if isinstance(value, list) else [value]
        tags += [f"{key}:{item}" for item in values if isinstance(item, str | int | float) and str(item).strip()]
    return tags


def memory(record: object, where: str) -> Draft:
    """One mem0 memory as a Draft. Raises: ValueError saying what is wrong."""
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    content = record.get("memory")
    if not isinstance(content, str) or not content.strip():
        raise ValueError("memory must be a non-empty string")
    owners = _owner_ids(record)
    categories = record.get("categories") or []
    if not isinstance(categories, list) or not all(isinstance(item, str) for item in categories):
        raise ValueError("categories must be a list of strings")
    source_id = record.get("id")
    key = f"id:{source_id}" if source_id not in (None, "") else "content:" + json.dumps([owners, content])
    app = record.get("app_id")
    return Draft(
        where=where, key=key, content=content.strip(),
        tags=tag_list([f"{label}:{value}" for label, value in owners], [f"app:{app}"] if app else [], categories,
                      _metadata_tags(record.get("metadata"))),
        subspace="/".join(f"{label}/{segment(value)}" for label, value in owners) or None,
        created_at=stamp_text(record.get("created_at")), updated_at=stamp_text(record.get("updated_at")),
        expires_at=stamp_text(record.get("expiration_date")),
    )


def _records(text: str) -> Iterator[tuple[str, object]]:
    try:
        document = json.loads(text)
    except RecursionError:
        yield "file", Bad("file", "not JSON (nested too deeply)")
        return
    except ValueError:  # not one JSON document: JSON lines
        for number, value in json_lines(text.splitlines()):
            yield f"line {number}", value
        return
    if isinstance(document, dict) and isinstance(document.get("results"), list):
        document = document["results"]
    if isinstance(document, dict):
        document = [document]
    if not isinstance(document, list):
        yield "file", Bad("file", "a mem0 export is a list of memories or an object with results")
        return
    for number, value in enumerate(document, start=1):
        yield f"record {number}", value


def read_mem0(text: str) -> Iterator[Draft | Bad]:
    for where, value in _records(text):
        if isinstance(value, Bad):
            yield value
            continue
        try:
            yield memory(value, where)
        except ValueError as exc:
            yield Bad(where, str(exc))
