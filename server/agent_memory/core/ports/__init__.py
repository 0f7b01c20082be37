"""Every port the domain needs from a store, in one place (adapters live in `agent_memory.storage`):
records (entries, audit, sessions, pruning), search (keyword, semantic, browsing), reflection
(distilling, meaning), operator reads and issued tokens (revocation)."""

from __future__ import annotations

from agent_memory.core.ports.operator import (
    AUDIT_COLUMNS,
    AuditQuery,
    OperatorStore,
    PartitionCount,
)
from agent_memory.core.ports.records import (
    AuditSink,
    EntryRepository,
    Keeper,
    ListQuery,
    Mark,
    PrunePolicy,
    PruneStore,
    SessionKey,
    SessionRef,
    SessionStore,
    SessionTransaction,
    Victim,
    WriteTransaction,
)
from agent_memory.core.ports.reflection import (
    Distiller,
    DistillFailed,
    Meaning,
    MeaningUnavailable,
)
from agent_memory.core.ports.search import (
    BrowseQuery,
    BrowseStore,
    CandidateFilter,
    Partition,
    RetrievalStore,
    SemanticIndex,
    SemanticUnavailable,
)
from agent_memory.core.ports.tokens import AgentCutoff, TokenRecord, TokenRegistry, TokenStanding

__all__ = [
    "ListQuery",
    "AUDIT_COLUMNS",
    "AgentCutoff",
    "AuditQuery",
    "AuditSink",
    "BrowseQuery",
    "BrowseStore",
    "CandidateFilter",
    "DistillFailed",
    "Distiller",
    "EntryRepository",
    "Mark",
    "Meaning",
    "MeaningUnavailable",
    "OperatorStore",
    "Partition",
    "PartitionCount",
    "PrunePolicy",
    "Keeper",
    "PruneStore",
    "RetrievalStore",
    "SemanticIndex",
    "SemanticUnavailable",
    "SessionKey",
    "SessionRef",
    "SessionStore",
    "SessionTransaction",
    "TokenRecord",
    "TokenRegistry",
    "TokenStanding",
    "Victim",
    "WriteTransaction",
]
