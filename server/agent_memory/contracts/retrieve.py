"""Pydantic contracts of memory_retrieve."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from agent_memory.contracts.crud import (
    DomainName,
    ErrorInfo,
    LayerName,
    PriorityName,
    ScopeName,
    SourceName,
    StrictModel,
)

MAX_QUERY_CHARS = 4000


class MemoryRetrieveArgs(StrictModel):
    """Arguments of memory_retrieve."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What you want to remember.")
    scopes: list[ScopeName] | None = Field(None, description="Default: every scope you may read.")
    namespaces: list[str] | None = Field(None, max_length=100, description="Only these namespaces.")
    layers: list[LayerName] | None = None
    tags: list[str] | None = Field(None, description="Only memories carrying all of these tags.")
    session_id: str | None = None
    limit: int | None = Field(None, ge=1, le=50, description="Default MEMORY_RETRIEVAL_LIMIT (10).")
    mode: Literal["hybrid", "semantic", "keyword"] = "hybrid"
    max_chars: int | None = Field(None, ge=1, le=1_000_000, description="Context budget in characters.")
    per_entry_max_chars: int | None = Field(None, ge=1, le=100_000)
    max_tokens: int | None = Field(None, ge=1, le=250_000,
                                   description="Context budget in tokens (estimated as 4 characters each).")
    min_score: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False,
                                    description="Relevance floor on score_parts.match: when no memory reaches "
                                                "it, nothing is returned. Default MEMORY_RETRIEVAL_MIN_SCORE; 0 "
                                                "turns it off.")
    relative_floor: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False,
                                         description="Leave out memories whose score is under this share of the "
                                                     "best memory's score. Default "
                                                     "MEMORY_RETRIEVAL_RELATIVE_FLOOR, or 0 when min_score "
                                                     "is 0 or since/until is given; 0 turns it off.")
    since: str | None = Field(None, max_length=64, description="Only memories dated at or after this ISO-8601 "
                                                               "date or date-time (their created_at; a logged "
                                                               "turn's `at`).")
    until: str | None = Field(None, max_length=64, description="Only memories dated before this ISO-8601 date-time "
                                                               "(a bare date includes that whole day).")
    budget_shares: dict[ScopeName, Annotated[float, Field(ge=0.0, allow_inf_nan=False)]] | None = Field(
        None, description="How max_chars is split across agent, team and global memory, e.g. {\"agent\": 0.4, "
                          "\"team\": 0.4, \"global\": 0.2}: shares >= 0, normalised (a tier not named: 0); a tier "
                          "that needs less leaves the rest to the others in proportion. Default "
                          "MEMORY_RETRIEVAL_BUDGET_SHARES.")
    include_superseded: bool = Field(False, description="Also facts a later fact changed (superseded_by set): "
                                                         "the whole chain, old facts beside the ones that replaced "
                                                         "them (whose supersedes names them).")
    domains: list[DomainName] | None = Field(None, max_length=5, description="Only memories of these domains "
                                                                         "(user_pref, system_fact, session_summary, "
                                                                         "agent_eval, code_context).")
    exclude_session_id: str | None = Field(None, min_length=1, max_length=128,
                                           description="Leave out the logged turns of this session (not its "
                                                       "compaction summaries): what a host's hook asks when it "
                                                       "recalls for a prompt of a session whose turns the host "
                                                       "holds already.")


class ScoreParts(StrictModel):
    keyword: float
    semantic: float
    match: float
    relevance: float
    neighbors: float
    recency: float
    priority: float
    confidence: float
    scope: float


class SupersededFact(StrictModel):
    """A fact a later fact replaced (memory_reflect consolidation): kept, out of retrieval by default."""

    id: str
    created_at: str = Field(description="The replaced fact's own date.")


class RetrievedMemory(StrictModel):
    id: str
    scope: ScopeName
    namespace: str
    layer: LayerName
    owner_agent_id: str
    content: str = Field(description="The memory as injected (possibly compressed; storage is unchanged).")
    truncated: bool
    tags: list[str]
    priority: PriorityName
    source: SourceName
    confidence: float
    domain: DomainName | None = Field(None, description="What the memory is about, or null.")
    created_at: str
    updated_at: str
    score: float
    score_parts: ScoreParts
    superseded_by: str | None = Field(description="The later fact that replaced this one (only with "
                                                   "include_superseded), else null.")
    supersedes: list[SupersededFact] = Field(description="The facts this one replaced (that you may read), "
                                                         "oldest first: ask with include_superseded to see them, "
                                                         "or undo with memory_crud unsupersede.")


def _retrieved_schema(schema: dict[str, Any]) -> None:
    """Retrieved memories are published as objects with every field required, without per-field
    types, for the same reason as entries (`contracts.crud._records_schema`): MCP clients validate each
    result against the output schema, and typed items cost the Python SDK's `jsonschema` ~4 ms per
    answer of 10, more than the whole retrieval. The typed schema is `schemas/retrieved_memory.json`."""
    schema.clear()
    schema.update({
        "type": "array",
        "items": {"type": "object", "required": list(RetrievedMemory.model_fields),
                  "description": "A retrieved memory; typed schema: schemas/retrieved_memory.json. Fields: "
                  + ", ".join(RetrievedMemory.model_fields)},
    })


class MemoryRetrieveResult(StrictModel):
    items: list[RetrievedMemory] = Field(default_factory=list, json_schema_extra=_retrieved_schema)
    context: str = ""
    used_chars: int = 0
    budget_chars: int = 0
    dropped: int = 0
    min_score: float = 0.0
    relative_floor: float = 0.0
    withheld: int = Field(0, description="Memories left out as not relevant enough: every candidate when none "
                                         "reached min_score, else those under relative_floor.")
    keyword_only: int = Field(0, description="Memories you may read that were written moments ago and are not "
                                             "yet searchable by meaning; they were searched by keyword only.")
    degraded: str | None = Field(None, description="Why the answer is partial (e.g. keyword-only), else null.")
    errors: list[ErrorInfo] = Field(default_factory=list)

    @classmethod
    def failed(cls, error: ErrorInfo) -> MemoryRetrieveResult:
        return cls(errors=[error])


def wire_item(item: Any) -> dict[str, Any]:
    e = item.entry
    return {
        "id": e.id, "scope": e.scope.value, "namespace": e.namespace, "layer": e.layer.value,
        "owner_agent_id": e.owner_agent_id, "content": item.text, "truncated": item.truncated,
        "tags": list(e.tags), "priority": e.priority.value, "source": e.source.value, "confidence": e.confidence,
        "domain": e.domain.value if e.domain else None, "created_at": e.created_at, "updated_at": e.updated_at,
        "score": item.score,
        "score_parts": {k: item.parts.get(k, 0.0) for k in ScoreParts.model_fields},
        "superseded_by": e.superseded_by, "supersedes": [old.as_dict() for old in item.supersedes],
    }
