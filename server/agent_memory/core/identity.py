"""Validation of caller identities, wherever they come from."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from agent_memory.core.errors import Forbidden
from agent_memory.core.models import Caller, Skill, SystemType

ID_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
IDENTITY_FIELDS = ("agent_id", "system_type", "team", "skills")


def validate_id(field: str, value: object) -> str:
    """Return `value` if it is a valid identifier, else raise `Forbidden` naming `field`.

    Raises:
        Forbidden: the value is not 1-128 characters of `[A-Za-z0-9._-]`.
    """
    if not isinstance(value, str) or not ID_PATTERN.match(value):
        raise Forbidden(
            f"invalid identity: {field} must be 1-128 characters of [A-Za-z0-9._-]",
            field=field,
        )
    return value


def parse_system_type(value: object) -> SystemType:
    """Raises: Forbidden when `value` is not one of sys1..sys5."""
    try:
        return SystemType(value)  # type: ignore[arg-type]
    except ValueError:
        raise Forbidden(
            "invalid identity: system_type must be one of sys1, sys2, sys3, sys4, sys5",
            field="system_type",
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
        raise Forbidden("invalid identity: skills must be a list of tool names", field="skills")
    skills: set[Skill] = set()
    for name in names:
        try:
            skills.add(Skill(name))  # type: ignore[arg-type]
        except ValueError:
            allowed = ", ".join(s.value for s in Skill)
            raise Forbidden(f"invalid identity: skills may only name {allowed}", field="skills") from None
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
        raise Forbidden("invalid identity: agent-memory/identity must be an object", field="identity")
    data: Mapping[str, Any] = raw
    unknown = sorted(set(data) - set(IDENTITY_FIELDS))
    if unknown:
        raise Forbidden(f"invalid identity: unknown field {unknown[0]}", field=unknown[0])
    for required in ("agent_id", "system_type", "team"):
        if required not in data:
            raise Forbidden(f"invalid identity: {required} is required", field=required)
    return Caller(
        agent_id=validate_id("agent_id", data["agent_id"]),
        system_type=parse_system_type(data["system_type"]),
        team=validate_id("team", data["team"]),
        skills=parse_skills(data["skills"]) if "skills" in data else default_skills,
    )
