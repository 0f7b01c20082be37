"""Sessions as `memory_reflect` handles them, for every caller (the MCP tool, the hook helper's
capture): turns logged, old history compacted, sessions distilled into facts and rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from agent_memory.core.model.commands import Call
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.models import Domain
from agent_memory.core.model.statements import Turn
from agent_memory.core.ports import Distiller
from agent_memory.core.sessions.reflection import Reflection, ReflectionService
from agent_memory.core.sessions.turns import Compaction, Logged, SessionService


@dataclass(frozen=True, slots=True)
class LogTurns:
    session_id: str
    turns: Sequence[Turn]
    namespace: str | None = None  # None: the caller's own agent namespace
    domain: Domain | None = None


@dataclass(frozen=True, slots=True)
class Compact:
    session_id: str
    keep_recent: int | None = None  # None: the server's compaction_keep_recent
    namespace: str | None = None


@dataclass(frozen=True, slots=True)
class Reflect:
    session_id: str
    facts: list[str] | None = None  # what the caller distilled itself (then nothing else runs)
    rules: list[str] | None = None
    max_items: int | None = None
    namespace: str | None = None
    distiller: Distiller | None = field(default=None, compare=False)  # the caller's model, when it offers one


class Sessions:
    def __init__(self, sessions: SessionService, reflection: ReflectionService) -> None:
        self._sessions = sessions
        self._reflection = reflection

    async def log(self, call: Call, request: LogTurns) -> Logged:
        """Raises: InvalidParams (no turns, a bad session id), NotImplementedByBackend (logging off),
        DomainError (the gate)."""
        call = replace(call, action="log")
        if not request.turns:
            raise InvalidParams("log needs turns: [{role: user|assistant|tool|system, content, name?, at?}]",
                                field="turns")
        return await self._sessions.log(call, request.session_id, list(request.turns), namespace=request.namespace,
                                        domain=request.domain)

    async def compact(self, call: Call, request: Compact) -> Compaction:
        return await self._sessions.compact(replace(call, action="compact"), request.session_id,
                                            request.keep_recent, namespace=request.namespace)

    async def reflect(self, call: Call, request: Reflect) -> Reflection:
        return await self._reflection.reflect(replace(call, action="reflect"), request.session_id,
                                              facts=request.facts, rules=request.rules, distiller=request.distiller,
                                              max_items=request.max_items, namespace=request.namespace)
