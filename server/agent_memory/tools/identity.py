"""Which caller a request runs as.

stdio and in-process: per-request `_meta`, then the `initialize` request's `_meta`, then the
launch configuration. HTTP: the bearer token; `_meta` only when trusted, and never contradicting
the token.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from agent_memory.core.access.identity import IDENTITY_SHAPE, parse_identity
from agent_memory.core.model.errors import Forbidden
from agent_memory.core.model.models import Caller, Skill

IDENTITY_KEY = "agent-memory/identity"
# The project an HTTP session works in (`setup HOST --server-url` writes it beside the token): a
# namespace segment; anything else is ignored (the session then works in none).
PROJECT_HEADER = "x-agent-memory-project"
PROJECT_SEGMENT = re.compile(r"^[A-Za-z0-9._-]{1,64}\Z")
CHOOSING = "docs/permissions.md, 'Choosing a system type and team'"
_SOURCES = {"request": "this request's _meta", "initialize": "the initialize request's _meta"}


def _claimed(request_meta: Mapping[str, Any] | None,
             session_meta: Mapping[str, Any] | None) -> tuple[object, str] | None:
    """The claimed identity and where it came from (`request` or `initialize`)."""
    for meta, source in ((request_meta, "request"), (session_meta, "initialize")):
        if meta and IDENTITY_KEY in meta:
            return meta[IDENTITY_KEY], source
    return None


def _parse(claimed: tuple[object, str], default_skills: frozenset[Skill]) -> Caller:
    """Parse a claimed identity; a refusal says where the identity was read and what to send.

    Raises:
        Forbidden: naming the field, with `details.source` and `details.expected`.
    """
    raw, source = claimed
    try:
        return parse_identity(raw, default_skills=default_skills)
    except Forbidden as error:
        said = error.message if error.message.endswith("?") else error.message + "."
        raise Forbidden(f"{said} Fix the {IDENTITY_KEY} object in {_SOURCES[source]} (set by the "
                        f"host's MCP configuration); it must be {IDENTITY_SHAPE}; see the {CHOOSING}",
                        **{**error.details, "source": f"{source}_meta", "expected": IDENTITY_SHAPE}) from None


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
    claimed = _claimed(request_meta, session_meta)
    if claimed is None:
        return launch
    # The project is where the host runs this server, not who calls: a claimed identity works in it too.
    return dataclasses.replace(_parse(claimed, launch.skills), project=launch.project,
                               project_legacy=launch.project_legacy)


def resolve_http_caller(request_meta: Mapping[str, Any] | None, session_meta: Mapping[str, Any] | None,
                        token_caller: Caller | None, *, trust_meta: bool) -> Caller:
    """The caller of an HTTP request: the token's identity. With `trust_meta`, an identity in
    `_meta` may repeat it or narrow its skills, nothing else.

    Raises:
        Forbidden: no authenticated caller, or `_meta` contradicts the token.
    """
    if token_caller is None:
        raise Forbidden("no authenticated caller on this HTTP request; send Authorization: Bearer <token> "
                        "(mint one with agent-memory token issue)", field="authorization")
    found = _claimed(request_meta, session_meta) if trust_meta else None
    if found is None:
        return token_caller
    claimed = _parse(found, token_caller.skills)
    for field in ("agent_id", "system_type", "team"):
        if getattr(claimed, field) != getattr(token_caller, field):
            raise Forbidden(f"agent-memory/identity contradicts the bearer token ({field}): the token says "
                            f"{getattr(token_caller, field)}; send the token's {field} or leave "
                            f"agent-memory/identity out (the token alone identifies you)",
                            field=field, token_value=str(getattr(token_caller, field)))
    if not claimed.skills <= token_caller.skills:
        extra = sorted(s.value for s in claimed.skills - token_caller.skills)
        raise Forbidden(f"agent-memory/identity claims skills the bearer token does not grant "
                        f"({', '.join(extra)}); the token grants "
                        f"{', '.join(sorted(s.value for s in token_caller.skills)) or 'none'}: claim a subset, "
                        f"or mint a token with those skills", field="skills",
                        allowed=sorted(s.value for s in token_caller.skills))
    return dataclasses.replace(claimed, project=token_caller.project)


CALLER_STATE_KEY = "agent_memory_caller"  # where the HTTP transport's bearer check leaves the caller


def caller_from_request(request: Any) -> Caller | None:
    """The authenticated caller of an HTTP request (None for stdio and in-process sessions)."""
    if request is None:
        return None
    state = getattr(request, "scope", {}).get("state") or {}
    caller = state.get(CALLER_STATE_KEY)
    if not isinstance(caller, Caller):
        return None
    project = str(getattr(request, "headers", {}).get(PROJECT_HEADER) or "")
    return dataclasses.replace(caller, project=project) if PROJECT_SEGMENT.match(project) else caller
