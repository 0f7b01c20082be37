"""The VSM permission gate (SPEC section 4), as pure functions.

| scope  | read                                   | write                              |
|--------|----------------------------------------|------------------------------------|
| agent  | owner only, caller team = entry team   | owner only, same team              |
| team   | any system type of that team           | sys3, sys4, sys5 of that team      |
| global | sys4 only, any team                    | sys4 only, any team                |
"""

from __future__ import annotations

from agent_memory.core.errors import Forbidden
from agent_memory.core.models import Access, Caller, Scope, SystemType

TEAM_WRITERS = frozenset({SystemType.SYS3, SystemType.SYS4, SystemType.SYS5})
GLOBAL_SYSTEMS = frozenset({SystemType.SYS4})


def first_segment(namespace: str) -> str:
    return namespace.split("/", 1)[0]


def is_allowed(
    caller: Caller,
    access: Access,
    scope: Scope,
    namespace: str,
    *,
    owner_agent_id: str | None = None,
    entry_team: str | None = None,
) -> bool:
    """Decide whether `caller` may `access` memory at (`scope`, `namespace`).

    Args:
        owner_agent_id: for an existing agent-scope entry, its owner.
        entry_team: for an existing agent-scope entry, its owning team.
    """
    if scope is Scope.AGENT:
        if first_segment(namespace) != caller.agent_id:
            return False
        if owner_agent_id is not None and owner_agent_id != caller.agent_id:
            return False
        return entry_team is None or entry_team == caller.team
    if scope is Scope.TEAM:
        if first_segment(namespace) != caller.team:
            return False
        return access is Access.READ or caller.system_type in TEAM_WRITERS
    return caller.system_type in GLOBAL_SYSTEMS


def require(
    caller: Caller,
    access: Access,
    scope: Scope,
    namespace: str,
    *,
    owner_agent_id: str | None = None,
    entry_team: str | None = None,
) -> None:
    """Raise `Forbidden` unless `is_allowed`. The message never says whether an entry exists.

    Raises:
        Forbidden: the gate denies the access.
    """
    if not is_allowed(
        caller, access, scope, namespace, owner_agent_id=owner_agent_id, entry_team=entry_team
    ):
        raise Forbidden(
            f"{caller.system_type.value} agent {caller.agent_id} of team {caller.team} "
            f"may not {access.value} {scope.value} memory in namespace {namespace}",
            scope=scope.value,
            namespace=namespace,
        )


def entry_team_for(caller: Caller, scope: Scope, namespace: str) -> str | None:
    """The owning team recorded on a new entry written by `caller` at (`scope`, `namespace`)."""
    if scope is Scope.AGENT:
        return caller.team
    if scope is Scope.TEAM:
        return first_segment(namespace)
    return None
