"""Pruning and privacy erase (SPEC section 8): what goes, in which order, and deleting it audited.

The pruner deletes expired entries, entries past their layer's retention, and, in a namespace over
its entry limit, compacted session turns first, then the lowest priority and oldest entries.
Pending conflict entries (and the entries they refer to) are never pruned. A session turn goes only
once its session is kept (distilled and digested into long-term memory, `Keeper`): the pruner keeps
the sessions of the turns it would delete first, and a turn whose session could not be kept stays. Every deletion is one
audit row (tool `pruner`, agent `system`) and drops the entry's vector through the outbox. An entry
changed after it was planned for pruning is left alone (the next pass decides again).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from agent_memory.core.access.visibility import namespace_area
from agent_memory.core.model.clock import format_ts
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.model.models import AuditEvent, Layer, Scope
from agent_memory.core.model.rules import check_namespace
from agent_memory.core.ports import Keeper, PrunePolicy, PruneStore, Victim, WriteTransaction

SESSION_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}\Z")  # as core.sessions.turns checks it

BATCH = 200
SYSTEM_AGENT = "system"


@dataclass(frozen=True, slots=True)
class Retention:
    max_entries_per_namespace: int = 10_000
    days: dict[Layer, float] = field(default_factory=dict)  # 0 or absent: kept forever


@dataclass(frozen=True, slots=True)
class Actor:
    """Who runs a prune or erase, for the audit rows."""

    agent_id: str = SYSTEM_AGENT
    tool: str = "pruner"
    team: str = ""
    system_type: str = "sys5"


class PruneService:
    def __init__(self, store: PruneStore, retention: Retention, clock: Callable[[], datetime],
                 keeper: Keeper | None = None) -> None:
        self._store = store
        self._retention = retention
        self._clock = clock
        self._keeper = keeper  # None: session turns not yet kept are never pruned

    def policy(self, *, retention: bool = True) -> PrunePolicy:
        now = self._clock()
        cutoffs = {layer.value: format_ts(now - timedelta(days=days))
                   for layer, days in self._retention.days.items() if days > 0} if retention else {}
        return PrunePolicy(now=format_ts(now), max_entries_per_namespace=self._retention.max_entries_per_namespace,
                           retention_cutoffs=cutoffs)

    async def prune(self, partitions: Sequence[tuple[str, str]] | None = None, *, dry_run: bool = False,
                    retention: bool = True, actor: Actor = Actor()) -> list[Victim]:
        """Plan (and unless `dry_run`, delete) what pruning removes now; returns what was (or
        would be) deleted. `retention=False` skips the per-layer age rule (the cheap pass run
        after writes: expired entries and namespaces over their limit only)."""
        victims = await self._store.prune_plan(self.policy(retention=retention), partitions)
        held = [victim.held for victim in victims if victim.held is not None]
        if dry_run:  # what would go: held turns too when their sessions can be kept first
            return victims if self._keeper is not None else [v for v in victims if v.held is None]
        if held and self._keeper is not None and await self._keeper.keep(held):
            victims = await self._store.prune_plan(self.policy(retention=retention), partitions)
        victims = [victim for victim in victims if victim.held is None]
        if not victims:
            return victims
        return await self._delete(victims, actor, "prune", check_etag=True)

    async def erase(self, scope: Scope, namespace: str, *, cascade: bool = False, session_id: str | None = None,
                    dry_run: bool = False, actor: Actor = Actor(tool="erase", agent_id="operator")) -> list[Victim]:
        """Privacy erase: every entry of a namespace (with `cascade`, also of `namespace/...`); with
        `session_id`, only that session's entries there."""
        check_namespace(namespace)
        if session_id is not None and not SESSION_ID.match(session_id):
            raise InvalidParams("session_id must be 1-128 characters of [A-Za-z0-9._:-]", field="session_id")
        victims = await self._store.namespace_entries(namespace_area(scope, namespace, cascade=cascade), session_id)
        if dry_run or not victims:
            return victims
        return await self._delete(victims, actor, "erase", check_etag=False)

    async def _delete(self, victims: list[Victim], actor: Actor, action: str, *, check_etag: bool) -> list[Victim]:
        request_id = new_request_id()
        deleted: list[Victim] = []
        for start in range(0, len(victims), BATCH):
            batch = victims[start:start + BATCH]
            at = format_ts(self._clock())

            def work(tx: WriteTransaction, batch: list[Victim] = batch, at: str = at) -> list[Victim]:
                gone = []
                for victim in batch:
                    entry = tx.get(victim.entry_id)
                    changed = check_etag and (entry is None or entry.etag != victim.etag
                                              or tx.has_pending_conflict(entry.id))
                    if entry is None or changed:
                        continue  # changed, or a conflict on it appeared, since it was planned
                    if tx.delete(entry.id, expected_etag=entry.etag):
                        tx.enqueue_vector(entry, "delete")
                        tx.audit(AuditEvent(
                            at=at, request_id=request_id, agent_id=actor.agent_id, team=actor.team,
                            system_type=actor.system_type, tool=actor.tool, action=action, scope=entry.scope.value,
                            namespace=entry.namespace, entry_id=entry.id, outcome="ok",
                            details={"reason": victim.reason}))
                        gone.append(victim)
                return gone

            deleted += await self._store.transact(work)
        return deleted
