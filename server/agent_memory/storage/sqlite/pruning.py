"""What pruning and erase delete, chosen in SQL (implements `PruneStore`)."""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.core.ports import PrunePolicy, Victim
from agent_memory.core.visibility import Area
from agent_memory.storage.sqlite.entries import SqliteEntryRepository
from agent_memory.storage.sqlite.visibility import area_clause

# Never pruned: pending conflict entries, and the entries they are conflicts of.
_UNPROTECTED = ("conflict = 0 AND id NOT IN (SELECT conflict_of FROM entries "
                "WHERE conflict = 1 AND conflict_of IS NOT NULL)")
_PRIORITY_ORDER = "CASE priority WHEN 'low' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END"


class SqlitePruneStore(SqliteEntryRepository):
    async def prune_plan(self, policy: PrunePolicy, partitions: Sequence[tuple[str, str]] | None) -> list[Victim]:
        where, params = _UNPROTECTED, []
        if partitions is not None:
            if not partitions:
                return []
            pairs = ", ".join("(?, ?)" for _ in partitions)
            where += f" AND (scope, namespace) IN (VALUES {pairs})"
            params = [v for pair in partitions for v in pair]
        chosen: dict[str, Victim] = {}
        async with self._db.reading() as conn:
            for row in await conn.execute_fetchall(
                f"SELECT id, scope, namespace, etag FROM entries WHERE {where} "
                "AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at", [*params, policy.now]):
                chosen.setdefault(row[0], Victim(row[0], row[1], row[2], row[3], "expired"))
            for layer, cutoff in sorted(policy.retention_cutoffs.items()):
                for row in await conn.execute_fetchall(
                    f"SELECT id, scope, namespace, etag FROM entries WHERE {where} AND layer = ? AND updated_at < ? "
                    "ORDER BY updated_at", [*params, layer, cutoff]):
                    chosen.setdefault(row[0], Victim(row[0], row[1], row[2], row[3], "retention"))
            count_where = "" if partitions is None else f"WHERE (scope, namespace) IN (VALUES {pairs})"
            crowded = await conn.execute_fetchall(
                f"SELECT scope, namespace, COUNT(*) FROM entries {count_where} GROUP BY scope, namespace "
                "HAVING COUNT(*) > ?", [*params, policy.max_entries_per_namespace])
            for scope, namespace, count in crowded:
                already = sum(1 for v in chosen.values() if v.scope == scope and v.namespace == namespace)
                excess = count - already - policy.max_entries_per_namespace
                if excess <= 0:
                    continue
                rows = await conn.execute_fetchall(
                    f"SELECT id, scope, namespace, etag FROM entries WHERE {_UNPROTECTED} AND scope = ? "
                    f"AND namespace = ? ORDER BY compacted DESC, {_PRIORITY_ORDER}, created_at, id LIMIT ?",
                    (scope, namespace, excess + already))
                for row in rows:
                    if excess <= 0:
                        break
                    if row[0] not in chosen:
                        chosen[row[0]] = Victim(row[0], row[1], row[2], row[3], "over_limit")
                        excess -= 1
        return list(chosen.values())

    async def namespace_entries(self, area: Area, session_id: str | None = None) -> list[Victim]:
        where, params = area_clause([area])
        if session_id is not None:
            where, params = f"({where}) AND session_id = ?", [*params, session_id]
        async with self._db.reading() as conn:
            rows = await conn.execute_fetchall(
                f"SELECT id, scope, namespace, etag FROM entries WHERE {where} ORDER BY namespace, created_at", params)
        return [Victim(r[0], r[1], r[2], r[3], "erase") for r in rows]
