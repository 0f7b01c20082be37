"""Read lists (`Entry.read_agents`): the agent ids allowed to read an entry, narrowing what its scope
allows, never widening it. The read rule itself lives in `core/access/visibility.py` (and its SQL twins);
this module checks a submitted list and says who may set or change one.

- A list holds 1-`MAX_READ_AGENTS` agent ids (the identity rule: 1-128 of `[A-Za-z0-9._-]`);
  duplicates are dropped, order kept. An empty list (or null on update) means no read list.
- The owner always reads its entry, listed or not; an operator token reads everything.
- Set on create by the creator (the owner); changed on update only by the owner or a sys4/sys5
  caller who may write (and read) the entry, and only with `if_match`.
- Agent ids only, not system types: the scope rule already grades access by system type (team:
  every type reads; global: sys4), so a system-type list would only repeat or contradict it, and
  an id such as `sys4` is a valid agent id, so one list holding both would be ambiguous.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent_memory.core.access.identity import ID_PATTERN, ID_RULE
from agent_memory.core.model.errors import Forbidden, InvalidParams
from agent_memory.core.model.models import Caller, Entry, SystemType

MAX_READ_AGENTS = 50
LIST_SETTERS = frozenset({SystemType.SYS4, SystemType.SYS5})


def check_read_agents(value: object, field: str = "read_agents") -> tuple[str, ...]:
    """The read list `value` names, deduplicated; () for none (None or []).

    Raises:
        InvalidParams: not a list of agent ids, or more than MAX_READ_AGENTS of them.
    """
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidParams(f"{field} must be a list of agent ids", field=field)
    ids = tuple(dict.fromkeys(value))
    if len(ids) > MAX_READ_AGENTS:
        raise InvalidParams(f"{field} may name at most {MAX_READ_AGENTS} agents, got {len(ids)}", field=field,
                            limit=MAX_READ_AGENTS)
    for index, agent_id in enumerate(ids):
        if not isinstance(agent_id, str) or not ID_PATTERN.match(agent_id):
            raise InvalidParams(f"{field}[{index}] is not an agent id: ids are {ID_RULE}", field=field,
                                index=index)
    return ids


def require_list_setter(caller: Caller, entry: Entry, if_match: str | None) -> None:
    """Raise unless `caller` may change `entry`'s read list (the owner, sys4/sys5, an operator)
    with an `if_match`.

    Raises:
        InvalidParams: no if_match.
        Forbidden: another caller (it may read and write the entry, so the answer hides nothing).
    """
    if if_match is None:
        raise InvalidParams("changing read_agents needs if_match (the entry's current etag)", field="if_match")
    if caller.operator or caller.agent_id == entry.owner_agent_id or caller.system_type in LIST_SETTERS:
        return
    raise Forbidden(f"only the owner ({entry.owner_agent_id}) or a sys4/sys5 agent may change the read list of "
                    f"{entry.id}", field="read_agents", allowed_system_types=sorted(s.value for s in LIST_SETTERS))


def check_keyed(entry: Entry, stored: Entry) -> None:
    """A keyed create that updated the entry holding its key (`stored`) keeps that entry's read list:
    one that sent a different list is refused (the transaction rolls back).

    Raises:
        InvalidParams: the create sent a read list other than the stored one.
    """
    if stored.id != entry.id and entry.read_agents and stored.read_agents != entry.read_agents:
        raise InvalidParams(f"key {entry.key!r} is held by entry {stored.id}, whose read list a create does not "
                            "change: update it with read_agents and if_match", field="read_agents")


def check_key_slot(caller: Caller, current: Entry, patched: Entry, holder: Callable[[Entry], str | None]) -> None:
    """A keyed entry holds its key in the shared slot without a read list and in its owner's own
    slot with one (`storage/key_slots.py`), so adding or removing its list moves it. Only its owner
    (or an operator) may do that, and only into a free slot: the owner can read whatever holds the
    other slot (its own entry, or a shared one), so naming it hides nothing, whereas a sys4/sys5
    caller might be told of an entry the owner keeps from it.

    Raises:
        Forbidden: another caller adds or removes a keyed entry's list.
        InvalidParams: the slot it would move to is held (`holder` says by which entry).
    """
    if current.key is None or bool(current.read_agents) == bool(patched.read_agents):
        return
    if not caller.operator and caller.agent_id != current.owner_agent_id:
        raise Forbidden(f"only the owner ({current.owner_agent_id}) may add or remove the read list of {current.id}, "
                        f"which holds key {current.key!r} (a read list moves the key to its owner's own)",
                        field="read_agents")
    taken = holder(patched)
    if taken is not None:
        where = "its owner's read-listed entries" if patched.read_agents else "the entries without a read list"
        raise InvalidParams(f"key {current.key!r} is held by {taken} among {where} here: one key names one "
                            "entry in each; change or delete that one first", field="read_agents", held_by=taken)


def key_holder_for(caller: Caller, holders: Sequence[Entry]) -> Entry | None:
    """Of the entries holding one key in one place that `caller` may read (`holders`), the one the
    key names for it, as a keyed create without a list would update: its own read-listed entry,
    else the newest read-listed one whose list names it, else the one without a read list."""
    def rank(entry: Entry) -> tuple[int, str, str]:  # the highest wins
        tier = 2 if entry.read_agents and entry.owner_agent_id == caller.agent_id else 1 if entry.read_agents else 0
        return tier, entry.updated_at, entry.id

    return max(holders, key=rank, default=None)


def list_change(current: Entry, patched: Entry) -> dict[str, object]:
    """What an update's audit row says about the read list: the new one, when it changed."""
    if patched.read_agents == current.read_agents:
        return {}
    return {"read_agents_changed": True, "read_agents": list(patched.read_agents)}
