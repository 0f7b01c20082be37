"""The VSM gate, walked exhaustively: 5 system types x 3 scopes x same/other team x
owner/non-owner x read/write."""

from __future__ import annotations

import itertools

import pytest

from agent_memory.core.access.permissions import is_allowed
from agent_memory.core.model.models import Access, Caller, Scope, SystemType

SYSTEMS = list(SystemType)
CALLER_TEAM = "red"


def expected(system: SystemType, scope: Scope, same_team: bool, owner: bool, access: Access) -> bool:
    """SPEC section 4, written out independently of the implementation."""
    if scope is Scope.AGENT:
        return owner and same_team
    if scope is Scope.TEAM:
        if not same_team:
            return False
        return access is Access.READ or system in (SystemType.SYS3, SystemType.SYS4, SystemType.SYS5)
    return system is SystemType.SYS4


CASES = list(itertools.product(SYSTEMS, list(Scope), [True, False], [True, False], list(Access)))


def test_the_table_covers_every_combination() -> None:
    assert len(CASES) == 5 * 3 * 2 * 2 * 2


@pytest.mark.parametrize(("system", "scope", "same_team", "owner", "access"), CASES,
                         ids=[f"{s.value}-{sc.value}-{'same' if t else 'other'}team-"
                              f"{'owner' if o else 'nonowner'}-{a.value}" for s, sc, t, o, a in CASES])
def test_gate_decision_matches_spec_table(
    system: SystemType, scope: Scope, same_team: bool, owner: bool, access: Access
) -> None:
    caller = Caller(agent_id="alice", system_type=system, team=CALLER_TEAM)
    entry_team = CALLER_TEAM if same_team else "blue"
    entry_owner = "alice" if owner else "bob"
    if scope is Scope.AGENT:
        namespace = f"{entry_owner}/notes"
        decision = is_allowed(caller, access, scope, namespace, owner_agent_id=entry_owner, entry_team=entry_team)
    elif scope is Scope.TEAM:
        decision = is_allowed(caller, access, scope, f"{entry_team}/shared")
    else:
        decision = is_allowed(caller, access, scope, "global")
    assert decision is expected(system, scope, same_team, owner, access)


def test_agent_namespace_of_another_agent_is_denied_before_any_entry_is_known() -> None:
    caller = Caller(agent_id="alice", system_type=SystemType.SYS5, team="red")
    assert not is_allowed(caller, Access.READ, Scope.AGENT, "bob")
    assert is_allowed(caller, Access.WRITE, Scope.AGENT, "alice")
    assert is_allowed(caller, Access.WRITE, Scope.AGENT, "alice/project-x")


def test_team_namespace_is_decided_by_its_first_segment() -> None:
    caller = Caller(agent_id="alice", system_type=SystemType.SYS3, team="red")
    assert is_allowed(caller, Access.WRITE, Scope.TEAM, "red/ops/runbooks")
    assert not is_allowed(caller, Access.READ, Scope.TEAM, "redder")
    assert not is_allowed(caller, Access.READ, Scope.TEAM, "blue/red")
