"""The permission hints are read from the gate itself, so they say what the gate does."""

from __future__ import annotations

import pytest

from agent_memory.core.access.permissions import allowed_system_types, denial, is_allowed
from agent_memory.core.model.models import Access, Caller, Scope, SystemType

S = SystemType


def test_allowed_system_types_are_the_spec_matrix() -> None:
    everyone = tuple(SystemType)
    assert allowed_system_types(Access.READ, Scope.AGENT) == everyone
    assert allowed_system_types(Access.WRITE, Scope.AGENT) == everyone
    assert allowed_system_types(Access.READ, Scope.TEAM) == everyone
    assert allowed_system_types(Access.WRITE, Scope.TEAM) == (S.SYS3, S.SYS4, S.SYS5)
    assert allowed_system_types(Access.READ, Scope.GLOBAL) == (S.SYS4,)
    assert allowed_system_types(Access.WRITE, Scope.GLOBAL) == (S.SYS4,)


@pytest.mark.parametrize("system_type", list(SystemType))
@pytest.mark.parametrize("access", list(Access))
@pytest.mark.parametrize("scope", list(Scope))
def test_every_denial_names_a_way_out_that_the_gate_allows(system_type: SystemType, access: Access,
                                                           scope: Scope) -> None:
    caller = Caller("alice", system_type, "red")
    namespace = {Scope.AGENT: "bob", Scope.TEAM: "blue", Scope.GLOBAL: "global"}[scope]
    if is_allowed(caller, access, scope, namespace):
        return
    error = denial(caller, access, scope, namespace)
    assert error.code == "FORBIDDEN" and error.details["scope"] == scope.value
    suggested = error.details.get("suggested_namespace")
    if suggested is not None:
        assert f"use namespace {suggested}" in error.message
    if suggested is None or not is_allowed(caller, access, scope, str(suggested)):
        # no namespace would do for this caller: the message names the system types that may
        allowed = error.details["allowed_system_types"]
        assert allowed == [st.value for st in allowed_system_types(access, scope)]
        assert system_type.value not in allowed and f"only {', '.join(allowed)}" in error.message
