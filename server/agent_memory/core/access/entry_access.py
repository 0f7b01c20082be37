"""Whether the caller may touch one entry it named by id: the entry-level half of the gate (the
namespace half runs before storage is read)."""

from __future__ import annotations

from agent_memory.core.access import permissions
from agent_memory.core.access.visibility import passes_read_list
from agent_memory.core.model.audit import audit_event
from agent_memory.core.model.commands import Call
from agent_memory.core.model.errors import NotFound
from agent_memory.core.model.models import Access, AuditEvent, Entry, Scope


def absent(entry_id: str, scope: Scope, namespace: str) -> NotFound:
    """The one answer for an id that is not readable here, whether it exists elsewhere or not."""
    return NotFound(f"no entry {entry_id} in {scope.value} namespace {namespace}; an id is looked up only in "
                    "the scope and namespace of the request: send the ones the entry lives in", id=entry_id)


def visible_entry(
    call: Call, access: Access, scope: Scope, namespace: str, entry_id: str, entry: Entry | None,
    now: str, denied: list[AuditEvent],
) -> Entry:
    """The entry if it lives at (scope, namespace), is unexpired at `now` and passes the
    entry-level gate (its read list included, for writes too); otherwise NOT_FOUND, so a lookup
    never reveals an entry elsewhere. An entry-level denial is appended to `denied` for the audit.

    Raises:
        NotFound: no such entry here.
    """
    if (
        entry is None
        or entry.scope is not scope
        or entry.namespace != namespace
        or (entry.expires_at is not None and entry.expires_at <= now)
    ):
        raise absent(entry_id, scope, namespace)
    if not permissions.is_allowed(call.caller, access, scope, namespace,
                                  owner_agent_id=entry.owner_agent_id if scope is Scope.AGENT else None,
                                  entry_team=entry.team if scope is Scope.AGENT else None) \
            or not passes_read_list(call.caller, entry):
        denied.append(audit_event(call, call.action or access.value, scope, namespace, entry_id, "denied", now,
                                  access=access.value))
        raise absent(entry_id, scope, namespace)
    return entry
