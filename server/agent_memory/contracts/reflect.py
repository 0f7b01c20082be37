"""Pydantic contracts of memory_reflect."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agent_memory.contracts.crud import DomainName, ErrorInfo, MemoryRecord, StrictModel, _records_schema

MAX_TURN_CHARS = 1_000_000  # longer than any cap: turns are cut to session_log_max_chars, not refused


class TurnArg(StrictModel):
    role: Literal["user", "assistant", "tool", "system"]
    content: str = Field(min_length=1, max_length=MAX_TURN_CHARS)
    name: str | None = Field(None, max_length=64, description="Who spoke (a person's or tool's name).")
    at: str | None = Field(None, max_length=64, description="When it was said (ISO-8601); default: now.")


class MemoryReflectArgs(StrictModel):
    """Arguments of memory_reflect."""

    action: Literal["log", "compact", "reflect"]
    session_id: str = Field(min_length=1, max_length=128)
    namespace: str | None = Field(None, max_length=512,
                                  description="Where in your agent memory the session and what it distils live: "
                                              "your agent id (default) or a namespace under it, e.g. "
                                              "<agent_id>/<project>.")
    turns: list[TurnArg] | None = Field(None, description="log: the turns to append (at most 100).")
    domain: DomainName | None = Field(None, description="log: the domain of the logged turns (e.g. code_context "
                                                        "for a coding session's transcript); default none.")
    facts: list[str] | None = Field(None, max_length=100, description="reflect: facts you distilled yourself.")
    rules: list[str] | None = Field(None, max_length=100, description="reflect: rules you distilled yourself.")
    max_items: int | None = Field(None, ge=1, le=100,
                                  description="reflect: most facts plus rules to keep (default 20).")
    keep_recent: int | None = Field(None, ge=0, le=10_000,
                                    description="compact: most recent turns left intact (default 10).")
    use_sampling: bool = Field(True, description="reflect: ask your client's model (MCP sampling) when it "
                                                 "offers it; false skips it (then the server's own model, "
                                                 "if it has one, else the extractive engine).")


class MemoryReflectResult(BaseModel):
    items: list[MemoryRecord] = Field(default_factory=list, json_schema_extra=_records_schema)
    errors: list[ErrorInfo] = Field(default_factory=list)
    engine: Literal["supplied", "sampling", "model", "extractive"] | None = Field(
        None, description="reflect: which engine distilled the facts: supplied (yours), sampling (your client's "
                          "model), model (the server's local model), extractive (null: nothing new to reflect).")
    fallback_reason: str | None = Field(None, description="reflect: why a model tried first (sampling, the "
                                                          "server's local model) was not used, if one was tried.")
    turns_processed: int = Field(0, description="log: turns stored; reflect: new turns distilled.")
    truncated: list[int] = Field(default_factory=list, description="log: indexes of turns cut to the length cap.")
    compacted: int = Field(0, description="Turns folded into a summary by this call.")
    summary_id: str | None = Field(None, description="The last compaction summary written by this call, if any "
                                                     "(items lists them all on compact).")
    updated_ids: list[str] = Field(default_factory=list,
                                   description="reflect: existing facts reinforced instead of copied.")
    superseded_ids: list[str] = Field(default_factory=list,
                                      description="reflect: existing facts a new one changed (kept, with superseded_by "
                                                  "set; left out of retrieval).")
    consolidation: Literal["meaning", "lexical"] | None = Field(
        None, description="reflect: how repeats and changes were recognised (lexical: by wording, while the "
                          "embedding model is not loaded; see degraded).")
    degraded: str | None = Field(None, description="reflect: why consolidation fell back to wording, if it did.")
    redacted: int = Field(0, description="Secrets (API keys, tokens, passwords, private keys, credentials) "
                                         "replaced by [REDACTED:<kind>] in what this call stored.")

    @classmethod
    def failed(cls, error: ErrorInfo) -> MemoryReflectResult:
        return cls(errors=[error])
