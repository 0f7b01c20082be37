"""Validation of caller identities, wherever they come from."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from agent_memory.core.model.errors import Forbidden
from agent_memory.core.model.models import Caller, Skill, SystemType

ID_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,128}\Z")  # \Z: "$" would let a trailing line break in
IDENTITY_FIELDS = ("agent_id", "system_type", "team", "skills")
REQUIRED_FIELDS = ("agent_id", "system_type", "team")
SYSTEM_TYPES = tuple(s.value for s in SystemType)
SKILLS = tuple(s.value for s in Skill)
ID_RULE = "1-128 characters of [A-Za-z0-9._-] (letters, digits, '.', '_', '-')"
IDENTITY_SHAPE = ('{"agent_id": "<id>", "system_type": "sys1".."sys5", "team": "<team>", '
                  '"skills": ["memory_crud", "memory_retrieve", "memory_reflect"] (optional)}')
_ECHOABLE = re.compile(r"[A-Za-z0-9 ._:/@+!#-]{1,64}")
_JSON_TYPES = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string",
               list: "an array", tuple: "an array", dict: "an object"}


def shown(value: object) -> str:
    """A rejected identity value as a message may show it: short plain text quoted, anything else
    by its JSON type (never a long or odd string, which could be anything)."""
    if isinstance(value, str) and _ECHOABLE.fullmatch(value):
        return f"'{value}'"
    if isinstance(value, str):
        return f"a {len(value)}-character string" if value else "an empty string"
    return _JSON_TYPES.get(type(value), "an object")


def _suggested_system_type(value: object) -> str | None:
    """`sys3` for `3`, `"3"`, `"SYS3"`, `"Sys 3"`, `"system3"`, `"S3"`: the likely intent."""
    text = str(value).strip().lower().replace(" ", "").replace("_", "").replace("-", "")
    for prefix in ("system", "sys", "s"):
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    return f"sys{text}" if text in {"1", "2", "3", "4", "5"} else None


def validate_id(field: str, value: object) -> str:
    """Return `value` if it is a valid identifier, else raise `Forbidden` naming `field`.

    Raises:
        Forbidden: the value is not 1-128 characters of `[A-Za-z0-9._-]`.
    """
    if not isinstance(value, str) or not ID_PATTERN.match(value):
        raise Forbidden(f"invalid identity: {field} must be {ID_RULE}; got {shown(value)}",
                        field=field, pattern=ID_PATTERN.pattern)
    return value


def parse_system_type(value: object) -> SystemType:
    """Raises: Forbidden when `value` is not one of sys1..sys5 (suggesting `sys3` for `3`)."""
    try:
        return SystemType(value)  # type: ignore[arg-type]
    except ValueError:
        guess = _suggested_system_type(value) if isinstance(value, str | int) and not isinstance(value, bool) else None
        hint = f"; did you mean '{guess}'?" if guess else ""
        raise Forbidden(
            f"invalid identity: system_type must be one of {', '.join(SYSTEM_TYPES)}; got {shown(value)}{hint}",
            field="system_type", allowed=list(SYSTEM_TYPES),
        ) from None


def parse_skills(value: object) -> frozenset[Skill]:
    """Accept a list of skill names or a comma-separated string.

    Raises:
        Forbidden: a name is not one of the three tools.
    """
    if isinstance(value, str):
        names: Iterable[object] = [part.strip() for part in value.split(",") if part.strip()]
    elif isinstance(value, list | tuple | set | frozenset):
        names = value
    else:
        raise Forbidden(f"invalid identity: skills must be a list of tool names ({', '.join(SKILLS)}); "
                        f"got {shown(value)}", field="skills", allowed=list(SKILLS))
    skills: set[Skill] = set()
    for name in names:
        try:
            skills.add(Skill(name))  # type: ignore[arg-type]
        except (ValueError, TypeError):
            raise Forbidden(f"invalid identity: skills may only name {', '.join(SKILLS)}; got {shown(name)}",
                            field="skills", allowed=list(SKILLS)) from None
    return frozenset(skills)


def parse_identity(raw: object, *, default_skills: frozenset[Skill]) -> Caller:
    """Build a `Caller` from an `agent-memory/identity` object.

    Args:
        raw: the metadata value, `{"agent_id", "system_type", "team", "skills"?}`.
        default_skills: granted when `skills` is absent (the launch configuration's grant).

    Raises:
        Forbidden: the object is malformed; the message names the offending field.
    """
    if not isinstance(raw, Mapping):
        raise Forbidden(f"invalid identity: agent-memory/identity must be an object; got {shown(raw)}",
                        field="identity")
    data: Mapping[str, Any] = raw
    unknown = sorted(str(key) for key in set(data) - set(IDENTITY_FIELDS))
    if unknown:
        raise Forbidden(f"invalid identity: unknown field {shown(unknown[0])}; the fields are "
                        f"{', '.join(IDENTITY_FIELDS)} (skills optional)",
                        field=unknown[0][:64], allowed=list(IDENTITY_FIELDS))
    missing = [name for name in REQUIRED_FIELDS if name not in data]
    if missing:
        raise Forbidden(f"invalid identity: {missing[0]} is required (missing: {', '.join(missing)})",
                        field=missing[0], missing=missing)
    return Caller(
        agent_id=validate_id("agent_id", data["agent_id"]),
        system_type=parse_system_type(data["system_type"]),
        team=validate_id("team", data["team"]),
        skills=parse_skills(data["skills"]) if "skills" in data else default_skills,
    )
