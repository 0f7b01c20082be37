"""The VSM permission gate (SPEC section 4), as pure functions.

| scope  | read                                   | write                              |
|--------|----------------------------------------|------------------------------------|
| agent  | owner only, caller team = entry team   | owner only, same team              |
| team   | any system type of that team           | sys3, sys4, sys5 of that team      |
| global | sys4 only, any team                    | sys4 only, any team                |
"""

from __future__ import annotations

from agent_memory.core.model.errors import Forbidden
from agent_memory.core.model.models import Access, Caller, Scope, SystemType

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
    if caller.operator:  # an operator token (audited on every use) may reach every scope
        return True
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
        raise denial(caller, access, scope, namespace)


def allowed_system_types(access: Access, scope: Scope) -> tuple[SystemType, ...]:
    """The system types `is_allowed` lets `access` memory of `scope` in their own namespace
    (agent: their own id; team: their own team; global: any). Asked of the gate itself, so
    messages and documentation built from it cannot drift from the rule."""
    probe = "probe"
    return tuple(st for st in SystemType if is_allowed(Caller(probe, st, probe), access, scope, probe))


def _names(system_types: tuple[SystemType, ...] | list[SystemType]) -> str:
    return ", ".join(st.value for st in system_types) or "no system type"


def denial(caller: Caller, access: Access, scope: Scope, namespace: str) -> Forbidden:
    """The `Forbidden` for a namespace-level denial: who may not do what where, why, and what
    would be allowed instead (the caller's own namespace, the system types that may)."""
    said = (f"{caller.system_type.value} agent {caller.agent_id} of team {caller.team} "
            f"may not {access.value} {scope.value} memory in namespace {namespace}")
    details: dict[str, object] = {"scope": scope.value, "namespace": namespace, "access": access.value}
    hints = []
    if scope is Scope.AGENT:
        hints.append(f"agent memory is private to its owner: use namespace {caller.agent_id} or "
                     f"{caller.agent_id}/... (or leave namespace out), or share through scope team")
        details["suggested_namespace"] = caller.agent_id
    elif scope is Scope.TEAM and first_segment(namespace) != caller.team:
        hints.append(f"team memory belongs to the team named by the namespace's first segment, and your team is "
                     f"{caller.team}: use namespace {caller.team} or {caller.team}/...")
        details["suggested_namespace"] = caller.team
    if scope is not Scope.AGENT and not is_allowed(caller, access, scope, caller.team):
        allowed = allowed_system_types(access, scope)
        readers = [st for st in allowed_system_types(Access.READ, scope) if st not in allowed]
        where = "of that team" if scope is Scope.TEAM else "of any team"
        hint = f"only {_names(allowed)} {where} may {access.value} {scope.value} memory"
        if readers:
            hint += f" ({_names(readers)} may only read it)"
        if scope is Scope.TEAM:
            hint += (f"; write to your agent scope instead, and report what the team should know to a "
                     f"{_names(allowed)} agent of team {caller.team}, which may write it")
        else:
            hint += f"; use scope team (namespace {caller.team}) or agent instead"
        hints.append(hint)
        details["allowed_system_types"] = [st.value for st in allowed]
    return Forbidden(f"{said}: {'; '.join(hints)}", **details)


def entry_team_for(caller: Caller, scope: Scope, namespace: str) -> str | None:
    """The owning team recorded on a new entry written by `caller` at (`scope`, `namespace`)."""
    if scope is Scope.AGENT:
        return caller.team
    if scope is Scope.TEAM:
        return first_segment(namespace)
    return None
