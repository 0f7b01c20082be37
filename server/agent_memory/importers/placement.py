"""Where an imported memory lands, and the entry it becomes (pure: no storage).

The target (scope, namespace, team, owning agent, layer, extra tags) comes from the command's
flags; a note may name its own scope/namespace/team. Placement follows the permission gate's
namespace rules (SPEC section 4): agent scope is the owning agent's namespace (`<agent>` or
`<agent>/...`) in its team; team scope is the team's (`<team>` or `<team>/...`); global has no team.

Entry ids are stable: `imp_` + 26 base32 characters of SHA-256 over the format, the place (scope,
namespace, team) and the draft's source identity, so importing the same input into the same place
again yields the same ids (found already stored, skipped), and into another place new ones.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, fields
from datetime import datetime, timedelta

from agent_memory.core.access.permissions import first_segment
from agent_memory.core.access.read_lists import check_read_agents
from agent_memory.core.memories.entry_checks import check_entry, check_identity
from agent_memory.core.model.clock import format_ts, parse_ts
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.ids import new_etag
from agent_memory.core.model.models import Domain, Entry, Layer, Priority, Scope, Source
from agent_memory.core.model.rules import (
    MAX_TAGS,
    Limits,
    check_confidence,
    check_content,
    check_namespace,
    normalise_timestamp,
)
from agent_memory.core.model.text import check_text
from agent_memory.importers.drafts import Draft

GLOBAL_NAMESPACE = "global"
_NOT_STORED = ("where", "key", "notes")  # its place in the input, its source identity (only hashed), reports


@dataclass(frozen=True, slots=True)
class Target:
    format: str
    scope: Scope
    namespace: str
    team: str  # the command's team: owns agent- and team-scope entries (global entries have none)
    agent_id: str
    layer: Layer = Layer.LONG_TERM
    tags: tuple[str, ...] = ()


def _choice(kind: type, value: str, field: str):  # noqa: ANN202 - one of the StrEnums
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"{field} must be one of {', '.join(v.value for v in kind)}; got {value!r}") from None


def area(scope: str | Scope, namespace: str | None, team: str, agent_id: str) -> tuple[Scope, str, str | None]:
    """The scope, namespace and owning team of a place, with defaults filled in: agent scope
    defaults to the agent's own namespace, team scope to the team's, global to `global`.

    Raises:
        ValueError: a malformed value, or a namespace outside the scope's rule (the message says how to fix it).
    """
    scope = _choice(Scope, scope, "scope") if isinstance(scope, str) else scope
    check_identity("team", team)
    check_identity("agent id", agent_id)
    default = {Scope.AGENT: agent_id, Scope.TEAM: team, Scope.GLOBAL: GLOBAL_NAMESPACE}[scope]
    try:
        namespace = check_namespace(namespace or default)
    except InvalidParams as exc:
        raise ValueError(exc.message) from None
    if scope is Scope.AGENT and first_segment(namespace) != agent_id:
        raise ValueError(f"an agent-scope namespace must be the owning agent's id or start with it: {agent_id} or "
                         f"{agent_id}/...; got {namespace} (set the agent with --agent-id)")
    if scope is Scope.TEAM and first_segment(namespace) != team:
        raise ValueError(f"a team-scope namespace must be the team or start with it: {team} or {team}/...; "
                         f"got {namespace} (set the team with --team {first_segment(namespace)})")
    return scope, namespace, None if scope is Scope.GLOBAL else team


def stable_id(fmt: str, scope: Scope, namespace: str, team: str | None, key: str) -> str:
    text = "\0".join([fmt, scope.value, namespace, team or "", key])
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()  # a source id may hold anything
    return "imp_" + base64.b32encode(digest).decode()[:26].lower()


def _stamp(value: str | None, field: str) -> str | None:
    if value is None:
        return None
    try:
        return normalise_timestamp(value, field)
    except InvalidParams as exc:
        raise ValueError(f"{exc.message}; got {value!r}") from None


def place(draft: Draft, target: Target, limits: Limits, now: datetime) -> Entry:
    """The entry `draft` becomes at `target` (or where the draft itself says).

    Raises:
        ValueError: the draft cannot be stored (the message says why).
    """
    _check_draft_text(draft)
    scope, namespace, team = _draft_area(draft, target)
    if draft.subspace:
        try:
            namespace = check_namespace(f"{namespace}/{draft.subspace}")
        except InvalidParams as exc:
            raise ValueError(exc.message) from None
    try:
        content = check_content(draft.content, limits)
        confidence = check_confidence(1.0 if draft.confidence is None else draft.confidence)
    except InvalidParams as exc:
        raise ValueError(exc.message) from None
    created = _stamp(draft.created_at, "created_at") or format_ts(now)
    updated = max(_stamp(draft.updated_at, "updated_at") or created, created)  # never before its creation
    expires = _stamp(draft.expires_at, "expires_at")
    if expires is None and draft.ttl_seconds is not None:
        try:
            expires = format_ts(parse_ts(created) + timedelta(seconds=draft.ttl_seconds))
        except OverflowError:
            raise ValueError(f"ttl of {draft.ttl_seconds:g} seconds ends after the year 9999") from None
    return check_entry(Entry(
        id=stable_id(target.format, scope, namespace, team, draft.key), scope=scope, namespace=namespace, team=team,
        owner_agent_id=target.agent_id, content=content, tags=_tags(target.tags, draft.tags),
        priority=_choice(Priority, draft.priority or "medium", "priority"), source=Source.IMPORT,
        confidence=confidence, layer=_choice(Layer, draft.layer, "layer") if draft.layer else target.layer,
        created_at=created, updated_at=updated, expires_at=expires, version=1, etag=new_etag(),
        session_id=draft.session_id, domain=_choice(Domain, draft.domain, "domain") if draft.domain else None,
        read_agents=_read_list(draft, target),
    ))


def _read_list(draft: Draft, target: Target) -> tuple[str, ...]:
    """The draft's read list; an empty one (every reader left out) keeps the entry to its owner."""
    if draft.read_agents is None:
        return ()
    try:
        return check_read_agents(draft.read_agents or (target.agent_id,))
    except InvalidParams as exc:
        raise ValueError(exc.message) from None


def _check_draft_text(draft: Draft) -> None:
    """Raises: ValueError naming the draft's first field holding text no store can hold (a NUL, a
    lone surrogate), before the text is used (cut into a namespace, clipped into tags). Its `key`
    is only hashed into the entry id, never stored, so it may hold anything."""
    try:
        check_text({item.name: getattr(draft, item.name) for item in fields(draft) if item.name not in _NOT_STORED})
    except InvalidParams as exc:
        raise ValueError(exc.message) from None


def _draft_area(draft: Draft, target: Target) -> tuple[Scope, str, str | None]:
    if draft.scope is None and draft.namespace is None and draft.team is None:
        return target.scope, target.namespace, None if target.scope is Scope.GLOBAL else target.team
    return area(draft.scope or target.scope, draft.namespace, draft.team or target.team, target.agent_id)


def _tags(first: tuple[str, ...], then: tuple[str, ...]) -> tuple[str, ...]:
    """The target's tags, then the draft's, repeats dropped, at most the tag limit (the rest dropped)."""
    return tuple(dict.fromkeys(first + then))[:MAX_TAGS]
