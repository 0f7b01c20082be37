"""The permission tables of docs/permissions.md say what the gate (`core/access/permissions.py`) does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_memory.core.access.permissions import allowed_system_types
from agent_memory.core.model.models import Access, Scope, SystemType

PERMISSIONS = (Path(__file__).resolve().parents[1] / "docs" / "permissions.md").read_text()


def _section(title: str) -> str:
    return PERMISSIONS.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _rights(system_type: SystemType, scope: Scope) -> str:
    rights = [access.value for access in (Access.READ, Access.WRITE)
              if system_type in allowed_system_types(access, scope)]
    return ", ".join(rights) or "none"


def _table_rows(text: str) -> dict[str, list[str]]:
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) > 1:
            rows[cells[0].strip("`")] = cells[1:]
    return rows


@pytest.mark.parametrize("system_type", list(SystemType))
def test_choosing_table_row_matches_the_gate(system_type: SystemType) -> None:
    rows = _table_rows(_section("Choosing a system type and team"))
    expected = [_rights(system_type, scope) for scope in (Scope.AGENT, Scope.TEAM, Scope.GLOBAL)]
    assert rows.get(system_type.value) == expected, (
        f"docs/permissions.md row for {system_type.value} should read: "
        f"| `{system_type.value}` | {' | '.join(expected)} |")


def test_choosing_section_describes_every_system_type() -> None:
    section = _section("Choosing a system type and team")
    for system_type in SystemType:
        assert f"- **`{system_type.value}`, " in section


@pytest.mark.parametrize(("scope", "column", "access"), [
    (Scope.TEAM, 3, Access.WRITE), (Scope.GLOBAL, 2, Access.READ), (Scope.GLOBAL, 3, Access.WRITE)])
def test_permissions_table_names_the_system_types_the_gate_allows(scope: Scope, column: int, access: Access) -> None:
    cell = _table_rows(_section("Permissions (VSM)"))[scope.value][column - 1]
    named = re.findall(r"`(sys\d)`", cell)
    assert named == [st.value for st in allowed_system_types(access, scope)], cell
