"""The write rules every imported entry meets, whatever its format (`export` records, notes, other
stores): an import stores only what a write could have stored, identically on SQLite and PostgreSQL.

- Text: no NUL and no lone surrogate in any field (`core/model/text.py`).
- Identities and places as the server checks them: the owner and the team are ids
  (`core/access/identity.py`), the namespace as writes take it (`core/model/rules.py`, the whole text).
- Place (`core/access/permissions.py`): a team-scope entry belongs to the team its namespace starts
  with; an agent-scope entry to the agent its namespace starts with (except a conflict entry,
  owned by whoever wrote the conflicting change: an operator in the memory console may write one
  in any agent's namespace); a global entry to no team.
- Version 1..2**31-1 (PostgreSQL's integer: a larger one, which SQLite could hold, could not move).
- References: `conflict_of`, `superseded_by` and `promoted_from` are entry ids, never the entry's
  own; a conflict entry and its original share a place (scope, namespace, team), and a superseded
  fact and the one that changed it share an owner's or team's memory (scope, team, the namespace's
  first segment). A reference to an entry that is neither stored nor imported is kept: a store
  holds such references once the entry they name is deleted, expired or erased.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields

from agent_memory.core.access.identity import ID_PATTERN, ID_RULE, shown
from agent_memory.core.access.permissions import first_segment
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.models import Entry, Scope
from agent_memory.core.model.rules import check_namespace
from agent_memory.core.model.text import check_text

ENTRY_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
ENTRY_ID_RULE = "1-128 characters of [A-Za-z0-9_.:-]"
MAX_VERSION = 2**31 - 1
REFERENCES = ("conflict_of", "superseded_by", "promoted_from")


def check_text_fields(entry: Entry) -> None:
    """Raises: ValueError naming the first field holding text no store can hold (NUL, lone surrogate)."""
    try:
        check_text({item.name: getattr(entry, item.name) for item in fields(entry)})
    except InvalidParams as exc:
        raise ValueError(exc.message) from None


def check_identity(field: str, value: object) -> str:
    """`value` if it is an id as the server takes agent ids and teams. Raises: ValueError."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise ValueError(f"{field} must be {ID_RULE}; got {shown(value)}")
    return value


def check_entry(entry: Entry) -> Entry:
    """`entry` if a write could have stored it (see the module's rules but the references' places).

    Raises:
        ValueError: the first rule it breaks, naming the field.
    """
    check_text_fields(entry)
    if not ENTRY_ID.fullmatch(entry.id):
        raise ValueError(f"id must be {ENTRY_ID_RULE}")
    for name in REFERENCES:
        value = getattr(entry, name)
        if value is not None and not ENTRY_ID.fullmatch(value):
            raise ValueError(f"{name} must be null or an entry id ({ENTRY_ID_RULE})")
        if value == entry.id:
            raise ValueError(f"{name} names the entry itself")
    try:
        check_namespace(entry.namespace)
    except InvalidParams as exc:
        raise ValueError(exc.message) from None
    check_identity("owner_agent_id", entry.owner_agent_id)
    root = first_segment(entry.namespace)
    if entry.scope is Scope.GLOBAL:
        if entry.team is not None:
            raise ValueError("team must be null for a global entry")
    else:
        check_identity("team", entry.team)
    if entry.scope is Scope.TEAM and root != entry.team:
        raise ValueError(f"a team-scope entry belongs to the team its namespace starts with: namespace "
                         f"{entry.namespace} is team {root}'s, not team {entry.team}'s")
    if entry.scope is Scope.AGENT and root != entry.owner_agent_id and not entry.conflict:
        raise ValueError(f"an agent-scope entry belongs to the agent its namespace starts with: namespace "
                         f"{entry.namespace} is agent {root}'s, not agent {entry.owner_agent_id}'s")
    if not 1 <= entry.version <= MAX_VERSION:
        raise ValueError(f"version must be between 1 and {MAX_VERSION}")
    return entry


def misplaced_reference(entry: Entry, known: Mapping[str, Entry]) -> str | None:
    """Why `entry`'s `conflict_of` or `superseded_by` names an entry of `known` (the store's and the
    import's entries by id) in another place, or None."""
    for name, same in (("conflict_of", _same_place), ("superseded_by", _same_memory)):
        target = known.get(getattr(entry, name) or "")
        if target is not None and not same(entry, target):
            return f"{name} names an entry in another place than this entry's ({_where(target)})"
    return None


def _same_place(entry: Entry, other: Entry) -> bool:
    return (entry.scope, entry.namespace, entry.team) == (other.scope, other.namespace, other.team)


def _same_memory(entry: Entry, other: Entry) -> bool:
    return (entry.scope, entry.team, first_segment(entry.namespace)) == \
        (other.scope, other.team, first_segment(other.namespace))


def _where(entry: Entry) -> str:
    team = "" if entry.team is None else f", team {entry.team}"
    return f"{entry.scope.value} {entry.namespace}{team}"
