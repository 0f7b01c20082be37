"""Pydantic contracts of memory_crud, and what every tool shares (strict models, the value names,
`ErrorInfo`, `MemoryRecord`): the source of `schemas/` and of argument validation."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ScopeName = Literal["agent", "team", "global"]
LayerName = Literal["working", "session", "long_term", "meta"]
PriorityName = Literal["low", "medium", "high"]
SourceName = Literal["reflection", "manual", "tool", "import"]
DomainName = Literal["user_pref", "system_fact", "session_summary", "agent_eval", "code_context"]
ErrorCode = Literal[
    "INVALID_PARAMS", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "RATE_LIMITED", "NOT_IMPLEMENTED", "INTERNAL"
]
CrudAction = Literal["create", "read", "update", "delete", "list", "promote", "unsupersede"]

MAX_BULK_ITEMS = 10
MAX_LIST_LIMIT = 100


class StrictModel(BaseModel):
    """Unknown fields and wrong types are errors, never silently coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


READ_AGENTS_HELP = ("A read list: the agent ids (at most 50) that may read the entry besides its owner, within what "
                   "its scope allows (it narrows, never widens). Mostly for team and global scope.")


class CreateItem(StrictModel):
    """An entry to create."""

    content: str = Field(description="The memory text (1..MEMORY_MAX_CONTENT_CHARS characters).")
    tags: list[str] | None = Field(None, description="At most 32 tags.")
    priority: PriorityName | None = None
    source: SourceName | None = None
    confidence: float | None = Field(None, ge=0.0, le=1.0,
                                     description="How sure this is, 0.0-1.0. Default by source: manual, tool and "
                                                 "import 1.0, reflection 0.9.")
    layer: LayerName | None = Field(None, description="Required for team and global scope.")
    expires_at: str | None = Field(None, description="ISO-8601 expiry (or give ttl_seconds).")
    ttl_seconds: int | None = Field(None, gt=0)
    key: str | None = Field(None, min_length=1, max_length=256,
                            description="A stable name within (scope, namespace): creating a key already held "
                                        "there updates that entry (version + 1, new etag; last write wins).")
    domain: DomainName | None = Field(None, description="What the memory is about: user_pref, system_fact, "
                                                        "session_summary, agent_eval or code_context.")
    read_agents: list[str] | None = Field(None, max_length=50, description=READ_AGENTS_HELP)


class ReadItem(StrictModel):
    id: str


class UpdateItem(StrictModel):
    """Fields to change on an entry; only the fields sent change. expires_at null clears it."""

    id: str
    if_match: str | None = Field(None, description="The etag you read; a mismatch is CONFLICT.")
    content: str | None = None
    tags: list[str] | None = None
    priority: PriorityName | None = None
    confidence: float | None = Field(None, ge=0.0, le=1.0, description="How sure this is, 0.0-1.0.")
    layer: LayerName | None = None
    expires_at: str | None = None
    domain: DomainName | None = Field(None, description="What the memory is about; null clears it.")
    read_agents: list[str] | None = Field(None, max_length=50,
                                          description="A new read list (owner or sys4/sys5 only, with if_match); "
                                                      "[] or null removes it.")


class DeleteItem(StrictModel):
    id: str
    if_match: str | None = None


class PromoteItem(StrictModel):
    """Copy an entry you can read into a scope you can write."""

    id: str
    target_scope: ScopeName
    target_namespace: str | None = Field(None, description="Required for team and global targets.")
    layer: LayerName | None = Field(None, description="Defaults to the source entry's layer.")


class UnsupersedeItem(StrictModel):
    """Undo a supersede: the fact becomes current again; the fact that replaced it stays."""

    id: str = Field(description="A fact with superseded_by set.")
    if_match: str | None = Field(None, description="The etag you read; a mismatch is CONFLICT.")


ITEM_MODELS: dict[str, type[StrictModel]] = {
    "create": CreateItem,
    "read": ReadItem,
    "update": UpdateItem,
    "delete": DeleteItem,
    "promote": PromoteItem,
    "unsupersede": UnsupersedeItem,
}


def _items_schema(schema: dict[str, Any]) -> None:
    schema.clear()
    schema.update(
        {
            "anyOf": [
                {"type": "array", "maxItems": MAX_BULK_ITEMS,
                 "items": {"anyOf": [model.model_json_schema() for model in ITEM_MODELS.values()]}},
                {"type": "null"},
            ],
            "default": None,
            "description": "Up to 10 items; their shape depends on action "
                           "(create/read/update/delete/promote/unsupersede).",
        }
    )


class CrudFilters(StrictModel):
    """`list` filters (all must match); `ids` is for `read`."""

    ids: list[str] | None = Field(None, max_length=MAX_LIST_LIMIT, description="read: entry ids")
    layer: LayerName | None = None
    tags: list[str] | None = Field(None, description="Entries carrying all of these tags.")
    source: SourceName | None = None
    priority: PriorityName | None = None
    owner_agent_id: str | None = None
    conflict: bool | None = None
    session_id: str | None = None
    created_after: str | None = None
    created_before: str | None = None
    include_expired: bool = False
    key: str | None = Field(None, min_length=1, max_length=256, description="list, read: the entry holding this key.")
    domain: DomainName | None = Field(None, description="list: entries of this domain.")


class MemoryCrudArgs(StrictModel):
    """Arguments of memory_crud (flat, at the top level)."""

    action: CrudAction
    scope: ScopeName = "agent"
    namespace: str | None = Field(
        None, description="agent: defaults to your agent id; team: '<team>' or '<team>/...'; required for team/global."
    )
    layer: LayerName | None = Field(None, description="create/promote: default layer; list: filter.")
    items: list[dict[str, Any]] | None = Field(None, max_length=MAX_BULK_ITEMS, json_schema_extra=_items_schema)
    filters: CrudFilters | None = None
    subtree: bool = Field(False, description="list: also the namespaces under namespace ('<namespace>/...'), "
                                             "in the same scope; exact and case-sensitive.")
    cursor: str | None = Field(None, description="next_cursor of the previous list page, with the same filters.")
    limit: int = Field(25, ge=1, le=MAX_LIST_LIMIT)
    if_match: str | None = Field(None, description="etag precondition for a single-item update, delete or "
                                                   "unsupersede.")


class ErrorInfo(BaseModel):
    code: ErrorCode
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class MemoryRecord(BaseModel):
    id: str
    scope: ScopeName
    namespace: str
    team: str | None
    owner_agent_id: str
    content: str
    tags: list[str]
    priority: PriorityName
    source: SourceName
    confidence: float
    layer: LayerName
    created_at: str
    updated_at: str
    expires_at: str | None
    version: int
    etag: str
    conflict: bool
    conflict_of: str | None
    session_id: str | None
    promoted_from: str | None
    compacted: bool
    superseded_by: str | None = Field(None, description="The id of the later fact that changed this one "
                                                        "(kept and listable, left out of retrieval by default).")
    key: str | None = Field(None, description="The entry's stable name within its scope and namespace, if any.")
    domain: DomainName | None = Field(None, description="What the memory is about (user_pref, system_fact, "
                                                        "session_summary, agent_eval, code_context), or null.")
    read_agents: list[str] = Field(default_factory=list, description="The entry's read list: the only agents, "
                                                                     "besides its owner, that may read it ([]: none).")


def _records_schema(schema: dict[str, Any]) -> None:
    """Entries are published as objects with every field required, without per-field types.

    MCP clients validate each result against the output schema; the Python SDK does it with
    `jsonschema`, where per-field types cost ~2 ms for a page of 25 entries (16x this form, and
    more than the whole rest of the call). The typed entry schema is `schemas/memory_record.json`.
    """
    schema.clear()
    schema.update(
        {
            "type": "array",
            "items": {
                "type": "object",
                "required": list(MemoryRecord.model_fields),
                "description": "A memory entry; typed schema: schemas/memory_record.json. Fields: "
                + ", ".join(MemoryRecord.model_fields),
            },
        }
    )


class MemoryCrudResult(BaseModel):
    items: list[MemoryRecord] = Field(default_factory=list, json_schema_extra=_records_schema)
    errors: list[ErrorInfo] = Field(default_factory=list)
    next_cursor: str | None = None
    has_more: bool = False
    redacted: int = Field(0, description="Secrets (API keys, tokens, passwords, private keys, credentials) "
                                         "replaced by [REDACTED:<kind>] in what this call stored.")

    @classmethod
    def failed(cls, error: ErrorInfo) -> MemoryCrudResult:
        return cls(items=[], errors=[error])
