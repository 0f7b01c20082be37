"""memory_retrieve: the validated arguments as the application's request, its result on the wire."""

from __future__ import annotations

from typing import Any

import structlog

from agent_memory.application.recall import Recall
from agent_memory.contracts.retrieve import MemoryRetrieveArgs
from agent_memory.contracts.retrieve_requests import retrieval_request, retrieve_payload
from agent_memory.core.model.commands import Call


async def run_memory_retrieve(recall: Recall, call: Call, args: MemoryRetrieveArgs) -> dict[str, Any]:
    result = await recall.retrieve(call, retrieval_request(args))
    structlog.contextvars.bind_contextvars(hits=len(result.items), injected_chars=result.used_chars,
                                           stages_ms=result.stages_ms, degraded=bool(result.degraded),
                                           retrievals=recall.metrics.retrievals,
                                           hit_rate=round(recall.metrics.hit_rate, 4))
    return retrieve_payload(result)
