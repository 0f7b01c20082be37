"""What pruning and erase delete, chosen in SQL (implements `PruneStore`), for either store. The
deletions themselves go through `transact` with compare-and-swap on each victim's etag, so an
entry changed since the plan was made stays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from agent_memory.core.access.visibility import Area
from agent_memory.core.ports import PrunePolicy, SessionRef, Victim
from agent_memory.storage.frame.dialect import Dialect, Reader
from agent_memory.storage.frame.visibility import area_clause

_PRIORITY_ORDER = "CASE priority WHEN 'low' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END"
_VICTIM = "SELECT id, scope, namespace, etag FROM entries"
# A session turn whose session's kept mark is below it (`kept`: the store's comparison of the mark
# `k` with the turn's position): what it said is not in long-term memory yet.
_HELD = ("(layer = 'session' AND scope = 'agent' AND session_id IS NOT NULL AND team IS NOT NULL "
         "AND source <> 'reflection' AND NOT EXISTS (SELECT 1 FROM reflection_marks k WHERE "
         "k.namespace = entries.namespace AND k.team = entries.team AND k.session_id = entries.session_id "
         "AND {kept}))")


class PruneFrame:
    dialect: ClassVar[Dialect]
    kept: ClassVar[str]  # SQL: the kept mark `k` covers the entry's position
    _db: Reader

    def _unprotected(self) -> str:
        """Never pruned: pending conflict entries, and the entries they are conflicts of."""
        conflict = self.dialect.flag("conflict")
        return (f"{self.dialect.flag('conflict', False)} AND id NOT IN (SELECT conflict_of FROM entries "
                f"WHERE {conflict} AND conflict_of IS NOT NULL)")

    async def prune_plan(self, policy: PrunePolicy, partitions: Sequence[tuple[str, str]] | None) -> list[Victim]:
        if partitions is not None and not partitions:
            return []
        m, unprotected = self.dialect.mark, self._unprotected()
        where, params, count_where = unprotected, [], ""
        if partitions is not None:
            pairs = ", ".join(f"({m}, {m})" for _ in partitions)
            where += f" AND (scope, namespace) IN (VALUES {pairs})"
            count_where = f"WHERE (scope, namespace) IN (VALUES {pairs})"
            params = [v for pair in partitions for v in pair]

        select = (f"SELECT id, scope, namespace, etag, {_HELD.format(kept=self.kept)}, session_id, owner_agent_id, "
                  "team FROM entries")

        def victim(row: Any, reason: str) -> Victim:
            held = SessionRef(row[2], row[5], row[6], row[7]) if row[4] else None
            return Victim(row[0], row[1], row[2], row[3], reason, held)

        def plan(conn: Any) -> list[Victim]:
            chosen: dict[str, Victim] = {}
            for row in conn.execute(f"{select} WHERE {where} AND expires_at IS NOT NULL AND expires_at <= {m} "
                                    "ORDER BY expires_at", [*params, policy.now]).fetchall():
                chosen.setdefault(row[0], victim(row, "expired"))
            for layer, cutoff in sorted(policy.retention_cutoffs.items()):
                for row in conn.execute(f"{select} WHERE {where} AND layer = {m} AND updated_at < {m} "
                                        "ORDER BY updated_at", [*params, layer, cutoff]).fetchall():
                    chosen.setdefault(row[0], victim(row, "retention"))
            crowded = conn.execute(f"SELECT scope, namespace, COUNT(*) FROM entries {count_where} "
                                   f"GROUP BY scope, namespace HAVING COUNT(*) > {m}",
                                   [*params, policy.max_entries_per_namespace]).fetchall()
            for scope, namespace, count in crowded:
                already = sum(1 for v in chosen.values() if v.scope == scope and v.namespace == namespace)
                excess = count - already - policy.max_entries_per_namespace
                if excess <= 0:
                    continue
                rows = conn.execute(
                    f"{select} WHERE {unprotected} AND scope = {m} AND namespace = {m} "
                    f"ORDER BY compacted DESC, {_PRIORITY_ORDER}, created_at, id LIMIT {m}",
                    (scope, namespace, excess + already)).fetchall()
                for row in rows:
                    if excess <= 0:
                        break
                    if row[0] not in chosen:
                        chosen[row[0]] = victim(row, "over_limit")
                        excess -= 1
            return list(chosen.values())

        return await self._db.read(plan, snapshot=True)

    async def namespace_entries(self, area: Area, session_id: str | None = None) -> list[Victim]:
        where, params = area_clause(self.dialect, [area])
        if session_id is not None:
            where, params = f"({where}) AND session_id = {self.dialect.mark}", [*params, session_id]
        rows = await self._db.read(lambda conn: conn.execute(
            f"{_VICTIM} WHERE {where} ORDER BY namespace, created_at", params).fetchall())
        return [Victim(r[0], r[1], r[2], r[3], "erase") for r in rows]
