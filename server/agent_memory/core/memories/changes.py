"""Applying an update to an entry (pure)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from agent_memory.core.access.read_lists import check_read_agents
from agent_memory.core.memories.secrets import Redactor
from agent_memory.core.model.clock import format_ts
from agent_memory.core.model.commands import EntryChange
from agent_memory.core.model.domains import domain_of
from agent_memory.core.model.ids import new_etag
from agent_memory.core.model.models import Entry, Layer
from agent_memory.core.model.rules import (
    MAX_TAG_CHARS,
    Limits,
    check_confidence,
    check_content,
    check_tags,
    expiry,
    required_layer,
)


def apply_change(current: Entry, change: EntryChange, now: datetime, limits: Limits) -> Entry:
    """The entry after `change`: only the sent fields change; version +1, a new etag.

    Raises:
        InvalidParams: a changed value breaks a rule (content length, tags, confidence, expiry).
    """
    fields = dict(change.changes)
    updates: dict[str, object] = {}
    if "content" in fields:
        updates["content"] = check_content(str(fields["content"]), limits)
    if "tags" in fields:
        updates["tags"] = check_tags(tuple(fields["tags"]))  # type: ignore[arg-type]
    if "priority" in fields:
        updates["priority"] = fields["priority"]
    if "confidence" in fields:
        updates["confidence"] = check_confidence(float(fields["confidence"]))  # type: ignore[arg-type]
    if "layer" in fields:
        layer = fields["layer"]
        updates["layer"] = required_layer(current.scope, layer if isinstance(layer, Layer) else None)
    if "domain" in fields:
        updates["domain"] = domain_of(fields["domain"], "domain")
    if "read_agents" in fields:
        updates["read_agents"] = check_read_agents(fields["read_agents"])
    if "expires_at" in fields:
        value = fields["expires_at"]
        updates["expires_at"] = None if value is None else expiry(now, str(value), None)
    return replace(current, **updates, version=current.version + 1, etag=new_etag(), updated_at=format_ts(now))


async def redact_change(change: EntryChange, redactor: Redactor, limits: Limits) -> tuple[EntryChange, int]:
    """`change` with the secrets in its content and tags redacted, and how many there were (a
    large content is redacted off the event loop)."""
    fields, found = dict(change.changes), 0
    if isinstance(fields.get("content"), str):
        fields["content"], found = await redactor.atext(str(fields["content"]), limits.max_content_chars)
    if isinstance(fields.get("tags"), list | tuple):
        fields["tags"], in_tags = redactor.texts(tuple(fields["tags"]), MAX_TAG_CHARS)  # type: ignore[arg-type]
        found += in_tags
    return replace(change, changes=fields), found
