"""`memory_retrieve` between its wire form and the application's typed request and result."""

from __future__ import annotations

from typing import Any

from agent_memory.contracts.retrieve import MemoryRetrieveArgs, wire_item
from agent_memory.core.model.domains import domains_of
from agent_memory.core.model.models import Layer, Scope
from agent_memory.core.recall.budget import budget_shares
from agent_memory.core.recall.retrieval import RetrievalRequest, RetrievalResult


def retrieval_request(args: MemoryRetrieveArgs) -> RetrievalRequest:
    """What the request leaves out stays None: the service's defaults fill it (`RetrievalDefaults`)."""
    return RetrievalRequest(
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
        leave_out_session=args.exclude_session_id,
    )


def retrieve_payload(result: RetrievalResult) -> dict[str, Any]:
    """The wire form of `MemoryRetrieveResult`."""
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
