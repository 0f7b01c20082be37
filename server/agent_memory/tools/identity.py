"""Which caller a request runs as: per-request `_meta`, then the `initialize` request's `_meta`,
then the launch configuration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_memory.core.identity import parse_identity
from agent_memory.core.models import Caller

IDENTITY_KEY = "agent-memory/identity"


def resolve_caller(request_meta: Mapping[str, Any] | None, session_meta: Mapping[str, Any] | None,
                   launch: Caller) -> Caller:
    """Args:
        request_meta: this request's `_meta` (2026-07-28 clients send the identity here).
        session_meta: the `initialize` request's `_meta` (2025-11-25 sessions).
        launch: the identity from the launch configuration; its skills are the default grant.

    Raises:
        Forbidden: the identity object is invalid (the message names the field).
    """
    for meta in (request_meta, session_meta):
        if meta and IDENTITY_KEY in meta:
            return parse_identity(meta[IDENTITY_KEY], default_skills=launch.skills)
    return launch
