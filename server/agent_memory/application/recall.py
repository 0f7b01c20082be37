"""Recall as `memory_retrieve` does it, for every caller (the MCP tool, the console's search, the
hook helper's recall at each prompt)."""

from __future__ import annotations

from agent_memory.core.model.commands import Call
from agent_memory.core.recall.retrieval import RetrievalRequest, RetrievalResult, RetrievalService


class Recall:
    def __init__(self, retrieval: RetrievalService) -> None:
        self._retrieval = retrieval

    @property
    def metrics(self):  # noqa: ANN201 - the service's own counters (hit rate, injected size)
        return self._retrieval.metrics

    async def retrieve(self, call: Call, request: RetrievalRequest) -> RetrievalResult:
        """Raises: InvalidParams (an empty query, bad tags or dates), DomainError (mode semantic
        cannot answer)."""
        return await self._retrieval.retrieve(call, request)
