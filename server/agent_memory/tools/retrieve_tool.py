"""memory_retrieve: validated arguments to RetrievalService, result to the wire."""

from __future__ import annotations

from typing import Any

import structlog

from agent_memory.config import Settings
from agent_memory.contracts.retrieve import MemoryRetrieveArgs, wire_item
from agent_memory.core.budget import budget_shares
from agent_memory.core.commands import Call
from agent_memory.core.domains import domains_of
from agent_memory.core.models import Layer, Scope
from agent_memory.core.retrieval import RetrievalRequest, RetrievalService


async def run_memory_retrieve(service: RetrievalService, settings: Settings, call: Call,
                              args: MemoryRetrieveArgs) -> dict[str, Any]:
    """`settings` is not read: what the request leaves out is the service's (`RetrievalDefaults`)."""
    request = RetrievalRequest(
        query=args.query,
        scopes=tuple(Scope(s) for s in args.scopes or ()),
        namespaces=tuple(args.namespaces or ()),
        layers=tuple(Layer(layer) for layer in args.layers or ()),
        tags=tuple(args.tags or ()),
        session_id=args.session_id,
        limit=args.limit,
        mode=args.mode,
        max_chars=args.max_chars,
        max_tokens=args.max_tokens,
        per_entry_max_chars=args.per_entry_max_chars,
        min_score=args.min_score,
        relative_floor=args.relative_floor,
        since=args.since,
        until=args.until,
        include_superseded=args.include_superseded,
        domains=domains_of(args.domains or ()),
        budget_shares=None if args.budget_shares is None else budget_shares(args.budget_shares),
    )
    result = await service.retrieve(call, request)
    structlog.contextvars.bind_contextvars(hits=len(result.items), injected_chars=result.used_chars,
                                           stages_ms=result.stages_ms, degraded=bool(result.degraded),
                                           retrievals=service.metrics.retrievals,
                                           hit_rate=round(service.metrics.hit_rate, 4))
    return {
        "items": [wire_item(item) for item in result.items],
        "context": result.context,
        "used_chars": result.used_chars,
        "budget_chars": result.budget_chars,
        "dropped": result.dropped,
        "min_score": result.min_score,
        "relative_floor": result.relative_floor,
        "withheld": result.withheld,
        "keyword_only": result.keyword_only,
        "degraded": "; ".join(result.degraded) or None,
        "errors": [],
    }
