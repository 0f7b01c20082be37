"""Typed inputs of memory_crud actions, already checked for shape by the MCP layer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agent_memory.core.model.models import Caller, Domain, Layer, Priority, Scope, Source


@dataclass(slots=True)
class Tally:
    """Secrets redacted while serving one call: what a tool answers as `redacted`."""

    redacted: int = 0


@dataclass(frozen=True, slots=True)
class Call:
    """The context of one tool call."""

    caller: Caller
    request_id: str
    tool: str = "memory_crud"
    action: str | None = None
    redactions: Tally = field(default_factory=Tally, compare=False, repr=False)  # secrets redacted by this call


@dataclass(frozen=True, slots=True)
class NewEntry:
    content: str
    tags: tuple[str, ...] = ()
    priority: Priority = Priority.MEDIUM
    source: Source = Source.MANUAL
    confidence: float | None = None  # None: the source's default (core/model/confidence.py)
    layer: Layer | None = None
    expires_at: str | None = None
    ttl_seconds: int | None = None
    key: str | None = None  # a stable name: a create of a key already held updates that entry
    read_agents: tuple[str, ...] = ()  # a read list (core/access/read_lists.py); () for none
    domain: Domain | None = None  # what it is about (core/model/domains.py)


@dataclass(frozen=True, slots=True)
class EntryChange:
    """An update: `changes` holds only the fields the caller sent (content, tags, priority,
    confidence, layer, expires_at, domain)."""

    id: str
    changes: Mapping[str, object] = field(default_factory=dict)
    if_match: str | None = None


@dataclass(frozen=True, slots=True)
class Removal:
    id: str
    if_match: str | None = None


@dataclass(frozen=True, slots=True)
class Promotion:
    id: str
    target_scope: Scope
    target_namespace: str | None = None
    layer: Layer | None = None
