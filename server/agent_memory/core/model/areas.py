"""Areas: regions of memory (a scope, a namespace and what is under it, an owner and team, a
reader), the vocabulary the visibility rule (`core/access/visibility.py`) and the ports speak."""

from __future__ import annotations

from dataclasses import dataclass

from agent_memory.core.model.models import Scope


@dataclass(frozen=True, slots=True)
class Area:
    """Entries in `scope` (None: any scope) at `namespace` (None: any namespace), also under it
    when `subtree`, and owned by `owner` in `team` when those are set; with `reader`, only entries
    without a read list or whose read list names the reader (or that the reader owns)."""

    scope: Scope | None
    namespace: str | None = None
    subtree: bool = False
    owner: str | None = None
    team: str | None = None
    reader: str | None = None

    def covers(self, scope: Scope, namespace: str, owner_agent_id: str | None, team: str | None,
               read_agents: tuple[str, ...] = ()) -> bool:
        if self.scope is not None and scope is not self.scope:
            return False
        if self.namespace is not None and not in_namespace(namespace, self.namespace, subtree=self.subtree):
            return False
        if self.owner is not None and owner_agent_id != self.owner:
            return False
        if self.reader is not None and not listed(self.reader, owner_agent_id, read_agents):
            return False
        return self.team is None or team == self.team


def listed(reader: str, owner_agent_id: str | None, read_agents: tuple[str, ...]) -> bool:
    """The read-list half of the rule: no list, or the reader owns the entry or is named in it."""
    return not read_agents or reader == owner_agent_id or reader in read_agents


def in_namespace(namespace: str, root: str, *, subtree: bool) -> bool:
    """`namespace` is `root`, or (with `subtree`) a namespace under it. Exact, case-sensitive."""
    return namespace == root or (subtree and namespace.startswith(root + "/"))
