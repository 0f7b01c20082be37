"""memory_reflect: the validated arguments as the application's request, its result on the wire
(the client's model offered through MCP sampling as the distiller)."""

from __future__ import annotations

from typing import Any

from agent_memory.application.sessions import Compact, LogTurns, Sessions
from agent_memory.contracts.reflect import MemoryReflectArgs
from agent_memory.contracts.reflect_requests import (
    compacted_payload,
    logged_payload,
    reflect_request,
    reflected_payload,
)
from agent_memory.core.model.commands import Call
from agent_memory.tools.sampling import sampling_distiller


async def run_memory_reflect(sessions: Sessions, call: Call, args: MemoryReflectArgs, ctx: Any) -> dict[str, Any]:
    distiller = sampling_distiller(ctx) if args.action == "reflect" and ctx is not None else None
    request = reflect_request(args, distiller)
    if isinstance(request, LogTurns):
        logged = await sessions.log(call, request)
        return logged_payload(logged, call.redactions.redacted)  # secrets replaced before storing
    if isinstance(request, Compact):
        return compacted_payload(await sessions.compact(call, request), call.redactions.redacted)
    return reflected_payload(await sessions.reflect(call, request), call.redactions.redacted)
