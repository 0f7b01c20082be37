"""Audit events: who did what where, never content."""

from __future__ import annotations

from agent_memory.core.commands import Call
from agent_memory.core.models import AuditEvent, Scope


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
