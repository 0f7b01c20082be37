"""Which caller a request runs as.

stdio and in-process: per-request `_meta`, then the `initialize` request's `_meta`, then the
launch configuration. HTTP: the bearer token; `_meta` only when trusted, and never contradicting
the token.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_memory.core.errors import Forbidden
from agent_memory.core.identity import parse_identity
from agent_memory.core.models import Caller

IDENTITY_KEY = "agent-memory/identity"


def _claimed(request_meta: Mapping[str, Any] | None, session_meta: Mapping[str, Any] | None) -> object | None:
    for meta in (request_meta, session_meta):
        if meta and IDENTITY_KEY in meta:
            return meta[IDENTITY_KEY]
    return None


def resolve_caller(request_meta: Mapping[str, Any] | None, session_meta: Mapping[str, Any] | None,
                   launch: Caller) -> Caller:
    """The caller of a stdio or in-process request.

    Args:
        request_meta: this request's `_meta` (2026-07-28 clients send the identity here).
        session_meta: the `initialize` request's `_meta` (2025-11-25 sessions).
        launch: the identity from the launch configuration; its skills are the default grant.

    Raises:
        Forbidden: the identity object is invalid (the message names the field).
    """
    raw = _claimed(request_meta, session_meta)
    return launch if raw is None else parse_identity(raw, default_skills=launch.skills)


def resolve_http_caller(request_meta: Mapping[str, Any] | None, session_meta: Mapping[str, Any] | None,
                        token_caller: Caller | None, *, trust_meta: bool) -> Caller:
    """The caller of an HTTP request: the token's identity. With `trust_meta`, an identity in
    `_meta` may repeat it or narrow its skills, nothing else.

    Raises:
        Forbidden: no authenticated caller, or `_meta` contradicts the token.
    """
    if token_caller is None:
        raise Forbidden("no authenticated caller on this HTTP request", field="authorization")
    raw = _claimed(request_meta, session_meta) if trust_meta else None
    if raw is None:
        return token_caller
    claimed = parse_identity(raw, default_skills=token_caller.skills)
    for field in ("agent_id", "system_type", "team"):
        if getattr(claimed, field) != getattr(token_caller, field):
            raise Forbidden(f"agent-memory/identity contradicts the bearer token ({field})", field=field)
    if not claimed.skills <= token_caller.skills:
        raise Forbidden("agent-memory/identity claims skills the bearer token does not grant", field="skills")
    return claimed
