"""`--from notes`: plain notes as JSON lines, one object a line with at least `content`.

Optional fields: `id` (the note's id in its source; the stable identity when given, else the
content is), `tags` (a list, or one comma-separated string), `priority`, `confidence`, `layer`,
`scope`, `namespace`, `team` (place this note elsewhere than the command's target), `created_at`,
`updated_at`, `expires_at` (ISO-8601). Any other field is refused, so a typo (`tag`) is reported
rather than silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from agent_memory.importers.drafts import Bad, Draft, json_lines, stamp_text, tag_list

FIELDS = ("content", "id", "tags", "priority", "confidence", "layer", "scope", "namespace", "team",
          "created_at", "updated_at", "expires_at")
_TEXT_FIELDS = ("priority", "layer", "scope", "namespace", "team")


def read_notes(lines: Iterable[str]) -> Iterator[Draft | Bad]:
    for number, value in json_lines(lines):
        if isinstance(value, Bad):
            yield value
            continue
        try:
            yield note(value, f"line {number}")
        except ValueError as exc:
            yield Bad(f"line {number}", str(exc))


def note(value: object, where: str) -> Draft:
    """One note object as a Draft. Raises: ValueError saying what is wrong."""
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    unknown = sorted(set(value) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r} (known: {', '.join(FIELDS)})")
    content = value.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError("content must be a non-empty string")
    for name in _TEXT_FIELDS:
        if value.get(name) is not None and not isinstance(value[name], str):
            raise ValueError(f"{name} must be a string")
    source_id = value.get("id")
    if source_id is not None and not isinstance(source_id, str | int):
        raise ValueError("id must be a string or a number")
    confidence = value.get("confidence")
    if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, int | float)):
        raise ValueError("confidence must be a number between 0 and 1")
    return Draft(
        where=where, key=f"id:{source_id}" if source_id is not None else f"content:{content}", content=content,
        tags=tag_list(_tags(value.get("tags"))), priority=value.get("priority"), confidence=confidence,
        layer=value.get("layer"), scope=value.get("scope"), namespace=value.get("namespace"), team=value.get("team"),
        created_at=stamp_text(value.get("created_at")), updated_at=stamp_text(value.get("updated_at")),
        expires_at=stamp_text(value.get("expires_at")),
    )


def _tags(raw: object) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [part.strip() for part in raw.split(",")]
    if isinstance(raw, list) and all(isinstance(tag, str) for tag in raw):
        return raw
    raise ValueError("tags must be a list of strings or one comma-separated string")
