"""Which stored entries a request may see: one rule, decided here and compiled to SQL in exactly
one place (`agent_memory.storage.sqlite.visibility`).

An `Area` is a region of memory: a scope, a namespace (optionally with everything under it,
`namespace/...`) and, for agent scope, the owning agent and team. Every query that selects entries
by where they live (list, retrieval, stats, sessions, pruning, export, erase) states its areas, and
storage matches them **case-exactly and literally**: `RED` is not `red`, `red` does not reach
`redteam` or `red_ops`, and `_` or `%` in a namespace are ordinary characters. The same areas
decide, in Python, whether one entry is readable (`can_read`), so the SQL and the per-entry gate
cannot disagree.

Read lists (`Entry.read_agents`) narrow what an area shows: an area with a `reader` covers an entry
carrying a read list only when the reader owns it or is named in it. `readable_areas` and
`listing_area` set the reader for team and global scope (agent scope is already owner-only);
operator areas have none, so an operator token still reads everything.
"""

from __future__ import annotations

from agent_memory.core.model.areas import Area, listed
from agent_memory.core.model.models import Caller, Entry, Scope, SystemType

GLOBAL_READERS = frozenset({SystemType.SYS4})


def passes_read_list(caller: Caller, entry: Entry) -> bool:
    """Whether `caller` gets past `entry`'s read list (operators always do): for lookups by id."""
    return caller.operator or listed(caller.agent_id, entry.owner_agent_id, entry.read_agents)


def readable_areas(caller: Caller, scopes: tuple[Scope, ...] = ()) -> tuple[Area, ...]:
    """Everything `caller` may read (SPEC section 4), within `scopes` (empty: all scopes).

    agent: its own namespace and below, only entries it owns in its own team; team: its team's
    namespace and below; global: everything, for sys4 only.
    """
    wanted = set(scopes) or set(Scope)
    if caller.operator:  # an operator token reads every scope
        return tuple(Area(scope) for scope in Scope if scope in wanted)
    areas = []
    if Scope.AGENT in wanted:
        areas.append(Area(Scope.AGENT, caller.agent_id, subtree=True, owner=caller.agent_id, team=caller.team))
    if Scope.TEAM in wanted:
        areas.append(Area(Scope.TEAM, caller.team, subtree=True, reader=caller.agent_id))
    if Scope.GLOBAL in wanted and caller.system_type in GLOBAL_READERS:
        areas.append(Area(Scope.GLOBAL, reader=caller.agent_id))
    return tuple(areas)


def project_areas(caller: Caller, scopes: tuple[Scope, ...] = ()) -> tuple[Area, ...]:
    """What retrieval searches by default in a project (`caller.project`): the project's own agent
    and team namespaces and everything under them, the agent's and the team's root namespaces
    (memory that applies everywhere), the project's older namespaces, and global memory; never
    another project's. Outside a project: everything `caller` may read."""
    if not caller.project or caller.operator:
        return readable_areas(caller, scopes)
    wanted = set(scopes) or set(Scope)
    areas = []
    for project in filter(None, (caller.project, caller.project_legacy)):
        if Scope.AGENT in wanted:
            areas.append(Area(Scope.AGENT, f"{caller.agent_id}/{project}", subtree=True, owner=caller.agent_id,
                              team=caller.team))
        if Scope.TEAM in wanted:
            areas.append(Area(Scope.TEAM, f"{caller.team}/{project}", subtree=True, reader=caller.agent_id))
    if Scope.AGENT in wanted:
        areas.append(Area(Scope.AGENT, caller.agent_id, owner=caller.agent_id, team=caller.team))
    if Scope.TEAM in wanted:
        areas.append(Area(Scope.TEAM, caller.team, reader=caller.agent_id))
    if Scope.GLOBAL in wanted and caller.system_type in GLOBAL_READERS:
        areas.append(Area(Scope.GLOBAL, reader=caller.agent_id))
    return tuple(areas)


def listing_area(caller: Caller, scope: Scope, namespace: str, *, subtree: bool = False) -> Area:
    """One namespace exactly (with `subtree`, also every namespace under it), as `memory_crud list`
    shows it: agent-scope entries only where the caller owns them in its own team (an agent id
    reused in another team sees none of them); team and global entries only past their read lists."""
    if caller.operator:
        return Area(scope, namespace, subtree=subtree)
    if scope is Scope.AGENT:
        return Area(scope, namespace, subtree=subtree, owner=caller.agent_id, team=caller.team)
    return Area(scope, namespace, subtree=subtree, reader=caller.agent_id)


def session_area(agent_id: str, team: str, namespace: str = "") -> Area:
    """An agent's own session memory: its namespace (its id, or `namespace` under it) exactly,
    entries it owns in that team."""
    return Area(Scope.AGENT, namespace or agent_id, owner=agent_id, team=team)


def namespace_area(scope: Scope | None, namespace: str | None, *, cascade: bool = False) -> Area:
    """What an operator selects (export, erase): a namespace, with `cascade` everything under it."""
    return Area(scope, namespace, subtree=cascade and namespace is not None)


def can_read(caller: Caller, entry: Entry, areas: tuple[Area, ...] | None = None) -> bool:
    """Whether `caller` may read this stored entry: the Python twin of the SQL the areas compile to.
    `areas`: `readable_areas(caller)` when the caller already has them (or a narrower selection)."""
    return any(area.covers(entry.scope, entry.namespace, entry.owner_agent_id, entry.team, entry.read_agents)
               for area in (readable_areas(caller) if areas is None else areas))
