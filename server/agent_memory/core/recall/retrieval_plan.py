"""memory_retrieve's first stage: the request as the caller sent it, the defaults for what it left
out (the one place they live), and the plan every later stage reads."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from agent_memory.core.access.visibility import Area, project_areas, readable_areas
from agent_memory.core.model.clock import format_ts
from agent_memory.core.model.commands import Call
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.models import Domain, Layer, Scope
from agent_memory.core.model.rules import check_tags, date_range
from agent_memory.core.ports import CandidateFilter
from agent_memory.core.recall.budget import Shares
from agent_memory.core.recall.query_terms import keyword_terms

MODES = ("hybrid", "keyword", "semantic")
CHARS_PER_TOKEN = 4  # max_tokens is counted as this many characters each


@dataclass(frozen=True, slots=True)
class RetrievalRequest:
    """What the caller asked; None: the default (`RetrievalDefaults`)."""

    query: str
    scopes: tuple[Scope, ...] = ()
    namespaces: tuple[str, ...] = ()
    layers: tuple[Layer, ...] = ()
    tags: tuple[str, ...] = ()
    session_id: str | None = None
    limit: int | None = None
    mode: str = "hybrid"
    max_chars: int | None = None
    max_tokens: int | None = None  # also a budget: max_tokens * 4 characters (the smaller of the two wins)
    per_entry_max_chars: int | None = None
    min_score: float | None = None  # the relevance floor on `match` (0: off)
    relative_floor: float | None = None  # items scoring under this share of the best score are left out (0: off)
    since: str | None = None  # ISO-8601: only memories dated (created_at) at or after this
    until: str | None = None  # ISO-8601: only memories dated before this (a bare date: to its end)
    include_superseded: bool = False
    budget_shares: Shares | None = None  # the budget split by tier (core/recall/budget.py)
    domains: tuple[Domain, ...] = ()  # only memories of these domains (empty: any, or none)
    # The turns of this session are left out (not its compaction summaries): a host hook recalling for
    # a prompt of the session, whose own turns are in the host's context already (`exclude_session_id`).
    leave_out_session: str | None = None


@dataclass(frozen=True, slots=True)
class RetrievalDefaults:
    """What a request leaves out gets these (the server's come from its settings: retrieval_limit,
    injection_max_chars, injection_per_entry_max_chars, retrieval_min_score,
    retrieval_relative_floor, retrieval_budget_shares)."""

    limit: int = 10
    max_chars: int = 4000
    per_entry_max_chars: int = 800
    min_score: float = 0.0
    relative_floor: float = 0.0
    budget_shares: Shares | None = None  # None: one budget, best first


@dataclass(frozen=True, slots=True)
class Plan:
    """A request resolved: defaults applied, inputs checked, what to search and how."""

    query: str
    mode: str
    terms: list[str]  # the query's keyword terms
    areas: tuple[Area, ...]  # what the caller may read, within the requested scopes
    namespaces: tuple[str, ...]
    filters: CandidateFilter
    depth: int  # candidates asked of each search
    limit: int
    budget_chars: int
    per_entry_max_chars: int
    min_score: float
    relative_floor: float
    shares: Shares | None
    now: datetime
    leave_out_session: str | None = None

    @property
    def keyword(self) -> bool:
        """Keyword scores count (mode semantic answered by keyword is decided later)."""
        return self.mode in ("hybrid", "keyword") and bool(self.terms)

    @property
    def semantic(self) -> bool:
        return self.mode in ("hybrid", "semantic")


def plan(call: Call, request: RetrievalRequest, defaults: RetrievalDefaults, depth: int, now: datetime) -> Plan:
    """Raises: InvalidParams (empty query, bad dates or tags)."""
    if not request.query.strip():
        raise InvalidParams("query must not be empty: give the words or question to look up", field="query")
    since, until = date_range(request.since, request.until)
    filters = CandidateFilter(now=format_ts(now), layers=request.layers, tags=check_tags(request.tags),
                              session_id=request.session_id, since=since, until=until,
                              include_superseded=request.include_superseded, domains=request.domains)
    limit = request.limit or defaults.limit
    return Plan(
        query=request.query, mode=request.mode, terms=keyword_terms(request.query),
        areas=(readable_areas if request.namespaces else project_areas)(call.caller, request.scopes),
        namespaces=request.namespaces, filters=filters,
        depth=max(depth, limit), limit=limit, budget_chars=_budget(request, defaults),
        per_entry_max_chars=request.per_entry_max_chars or defaults.per_entry_max_chars,
        min_score=defaults.min_score if request.min_score is None else request.min_score,
        relative_floor=_relative_floor(request, defaults),
        shares=defaults.budget_shares if request.budget_shares is None else request.budget_shares, now=now,
        leave_out_session=request.leave_out_session)


def _relative_floor(request: RetrievalRequest, defaults: RetrievalDefaults) -> float:
    """The caller's relative floor; else none when it asked for the nearest memories (an explicit
    `min_score: 0`) or for a time window (`since`/`until`: everything in the window that matches),
    else the default."""
    if request.relative_floor is not None:
        return request.relative_floor
    if request.min_score == 0 or request.since is not None or request.until is not None:
        return 0.0
    return defaults.relative_floor


def _budget(request: RetrievalRequest, defaults: RetrievalDefaults) -> int:
    """max_chars, max_tokens, or the smaller of the two when both are given; neither: the default."""
    chars = request.max_chars or defaults.max_chars
    if request.max_tokens is None:
        return chars
    tokens = request.max_tokens * CHARS_PER_TOKEN
    return min(chars, tokens) if request.max_chars else tokens
