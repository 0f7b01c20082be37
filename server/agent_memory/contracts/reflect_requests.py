"""`memory_reflect` between its wire form and the application's typed requests and results."""

from __future__ import annotations

from typing import Any

from agent_memory.application.sessions import Compact, LogTurns, Reflect
from agent_memory.contracts.records import wire_record
from agent_memory.contracts.reflect import MemoryReflectArgs
from agent_memory.core.model.domains import domain_of
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.statements import Turn
from agent_memory.core.ports import Distiller
from agent_memory.core.sessions.reflection import Reflection
from agent_memory.core.sessions.turns import Compaction, Logged

# What each action alone takes (anything else sent with it is INVALID_PARAMS).
ONLY_FOR = (("turns", "log"), ("domain", "log"), ("keep_recent", "compact"), ("facts", "reflect"),
            ("rules", "reflect"), ("max_items", "reflect"))


def reflect_request(args: MemoryReflectArgs, distiller: Distiller | None = None) -> LogTurns | Compact | Reflect:
    """`distiller`: the caller's model for `reflect` (used when `use_sampling` is not false).

    Raises: InvalidParams (an argument another action takes)."""
    for name, action in ONLY_FOR:
        if getattr(args, name) is not None and args.action != action:
            raise InvalidParams(f"{name} is only for the {action} action: drop it, or use action {action}",
                                field=name)
    if args.action == "log":
        turns = [Turn(role=t.role, content=t.content, name=t.name, at=t.at) for t in args.turns or ()]
        return LogTurns(args.session_id, turns, args.namespace, domain_of(args.domain))
    if args.action == "compact":
        return Compact(args.session_id, args.keep_recent, args.namespace)
    return Reflect(args.session_id, args.facts, args.rules, args.max_items, args.namespace,
                   distiller if args.use_sampling else None)


def _empty(redacted: int) -> dict[str, Any]:
    return {"items": [], "errors": [], "engine": None, "fallback_reason": None, "turns_processed": 0, "truncated": [],
            "compacted": 0, "summary_id": None, "updated_ids": [], "superseded_ids": [], "consolidation": None,
            "degraded": None, "redacted": redacted}


def logged_payload(logged: Logged, redacted: int) -> dict[str, Any]:
    """The wire form of `MemoryReflectResult` for `log`."""
    result = _empty(redacted)
    result.update(items=[wire_record(e) for e in logged.entries], turns_processed=len(logged.entries),
                  truncated=logged.truncated)
    if logged.compaction is not None and logged.compaction.summary is not None:
        result.update(compacted=len(logged.compaction.compacted_ids), summary_id=logged.compaction.summary.id)
    return result


def compacted_payload(compaction: Compaction, redacted: int) -> dict[str, Any]:
    result = _empty(redacted)
    if compaction.summary is not None:
        result.update(items=[wire_record(e) for e in compaction.summaries], compacted=len(compaction.compacted_ids),
                      summary_id=compaction.summary.id)
    return result


def reflected_payload(done: Reflection, redacted: int) -> dict[str, Any]:
    result = _empty(redacted)
    result.update(items=[wire_record(e) for e in done.entries], engine=done.engine,
                  fallback_reason=done.fallback_reason, turns_processed=done.turns, updated_ids=done.updated_ids,
                  superseded_ids=done.superseded_ids, consolidation=done.consolidation, degraded=done.degraded)
    return result
