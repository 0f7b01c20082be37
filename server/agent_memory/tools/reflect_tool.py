"""memory_reflect: validated arguments to the session and reflection services, result to the wire."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agent_memory.contracts.records import wire_record
from agent_memory.contracts.reflect import MemoryReflectArgs
from agent_memory.core.commands import Call
from agent_memory.core.domains import domain_of
from agent_memory.core.errors import InvalidParams
from agent_memory.core.extract import Turn
from agent_memory.core.reflection import ReflectionService
from agent_memory.core.sessions import SessionService
from agent_memory.tools.sampling import sampling_distiller


async def run_memory_reflect(sessions: SessionService, reflection: ReflectionService, call: Call,
                             args: MemoryReflectArgs, ctx: Any) -> dict[str, Any]:
    call = replace(call, action=args.action)
    _only_for(args, "turns", "log")
    _only_for(args, "domain", "log")
    _only_for(args, "keep_recent", "compact")
    for name in ("facts", "rules", "max_items"):
        _only_for(args, name, "reflect")
    result: dict[str, Any] = {"items": [], "errors": [], "engine": None, "fallback_reason": None,
                              "turns_processed": 0, "truncated": [], "compacted": 0, "summary_id": None,
                              "updated_ids": [], "superseded_ids": [], "consolidation": None, "degraded": None,
                              "redacted": 0}
    if args.action == "log":
        if not args.turns:
            raise InvalidParams("log needs turns: [{role: user|assistant|tool|system, content, name?, at?}]",
                                field="turns")
        turns = [Turn(role=t.role, content=t.content, name=t.name, at=t.at) for t in args.turns]
        logged = await sessions.log(call, args.session_id, turns, namespace=args.namespace,
                                    domain=domain_of(args.domain))
        result.update(items=[wire_record(e) for e in logged.entries], turns_processed=len(logged.entries),
                      truncated=logged.truncated)
        if logged.compaction is not None and logged.compaction.summary is not None:
            result.update(compacted=len(logged.compaction.compacted_ids), summary_id=logged.compaction.summary.id)
    elif args.action == "compact":
        compaction = await sessions.compact(call, args.session_id, args.keep_recent, namespace=args.namespace)
        if compaction.summary is not None:
            result.update(items=[wire_record(e) for e in compaction.summaries], compacted=len(compaction.compacted_ids),
                          summary_id=compaction.summary.id)
    else:
        distiller = sampling_distiller(ctx) if args.use_sampling and ctx is not None else None
        done = await reflection.reflect(call, args.session_id, facts=args.facts, rules=args.rules,
                                        distiller=distiller, max_items=args.max_items, namespace=args.namespace)
        result.update(items=[wire_record(e) for e in done.entries], engine=done.engine,
                      fallback_reason=done.fallback_reason, turns_processed=done.turns, updated_ids=done.updated_ids,
                      superseded_ids=done.superseded_ids, consolidation=done.consolidation, degraded=done.degraded)
    result["redacted"] = call.redactions.redacted  # secrets replaced before storing
    return result


def _only_for(args: MemoryReflectArgs, name: str, action: str) -> None:
    if getattr(args, name) is not None and args.action != action:
        raise InvalidParams(f"{name} is only for the {action} action: drop it, or use action {action}", field=name)
