"""Audit events: who did what where, never content."""

from __future__ import annotations

from dataclasses import replace

from agent_memory.core.model.commands import Call
from agent_memory.core.model.models import AuditEvent, Scope
from agent_memory.core.model.text import is_storable, storable

TEXT_FIELDS = ("at", "request_id", "agent_id", "team", "system_type", "tool", "action", "scope", "namespace",
               "entry_id", "outcome")


def audit_event(
    call: Call, action: str, scope: Scope | None, namespace: str | None, entry_id: str | None, outcome: str, at: str,
    **details: object,
) -> AuditEvent:
    return AuditEvent(
        at=at,
        request_id=call.request_id,
        agent_id=call.caller.agent_id,
        team=call.caller.team,
        system_type=call.caller.system_type.value,
        tool=call.tool,
        action=action,
        scope=scope.value if scope is not None else None,
        namespace=namespace,
        entry_id=entry_id,
        outcome=outcome,
        details={**details, "operator": True} if call.caller.operator else dict(details),
    )


def storable_event(event: AuditEvent) -> AuditEvent:
    """`event` as every store can hold it (core/model/text.py): text a store cannot hold (NUL, a lone
    surrogate, in any field or in `details` at any depth) escaped, and the row marked
    `details.sanitised: true`. The audit records refused requests too, so it takes what it is given
    rather than refusing it; an event without such text is returned as it is."""
    changed = False

    def clean(value: object) -> object:
        nonlocal changed
        if isinstance(value, str):
            if is_storable(value):
                return value
            changed = True
            return storable(value)
        if isinstance(value, dict):
            return {clean(k) if isinstance(k, str) else k: clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            # A list of plain strings (a list's entry ids) is checked in one search: the check is for
            # code points, so joining them neither hides nor makes one.
            if all(type(v) is str for v in value) and is_storable("".join(value)):
                return value
            return [clean(v) for v in value]
        return value

    texts = {name: clean(getattr(event, name)) for name in TEXT_FIELDS}
    details = clean(event.details)
    if not changed:
        return event
    return replace(event, **texts, details={**details, "sanitised": True})  # type: ignore[dict-item]
