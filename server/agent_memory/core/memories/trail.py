"""An entry's audit trail as the memory console shows it to one caller."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent_memory.core.model.models import Caller

OPERATOR_COMMAND_TEAM = ""  # the rows the operator commands write (import, prune, erase) have no team


def visible_trail(caller: Caller, rows: Sequence[Mapping[str, object]], limit: int) -> list[Mapping[str, object]]:
    """The newest `limit` of an entry's audit rows (`rows` oldest first, as they are returned)
    that `caller` may see. An operator sees every row; anyone else the rows of its own team's
    callers, of operator tokens (which acted on that team's memory) and of the operator
    commands, never another team's callers: not their ids, not their probes of the entry (a
    denied read by id is audited with the entry's id), not what they retrieved of global memory."""
    if not caller.operator:
        rows = [row for row in rows if row.get("team") in (caller.team, OPERATOR_COMMAND_TEAM) or _by_operator(row)]
    return list(rows[-limit:]) if limit > 0 else []


def _by_operator(row: Mapping[str, object]) -> bool:
    details = row.get("details")
    return isinstance(details, Mapping) and details.get("operator") is True
