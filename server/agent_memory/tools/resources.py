"""MCP resources: `memory://metrics`, `memory://stats`, and the template `memory://entries/{id}`.

Every read runs as the caller bound to the session, like a tool call. Metrics are server-wide
counters (no content). Stats count only the entries the caller may read, and only their queued
vector changes (the store-wide figures are the operator's: `agent-memory stats`). An entry is returned
only where the caller may read it; anything else is "not found" (`-32002`), word for word the
answer for an id that does not exist, a caller without the `memory_crud` skill included (its
refusal is audited as a denial naming the skill, but the answer says nothing more than "not found").
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcp import types
from mcp.shared.exceptions import MCPError

from agent_memory.contracts.errors import to_error_info
from agent_memory.contracts.records import wire_record
from agent_memory.core.access.visibility import readable_areas
from agent_memory.core.model.audit import audit_event
from agent_memory.core.model.clock import format_ts, utc_now
from agent_memory.core.model.commands import Call
from agent_memory.core.model.errors import DomainError, NotFound
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.model.models import Skill

METRICS_URI = "memory://metrics"
STATS_URI = "memory://stats"
ENTRY_TEMPLATE = "memory://entries/{id}"
_ENTRY = re.compile(r"^memory://entries/([A-Za-z0-9_.:-]{1,128})\Z")
RESOURCE_NOT_FOUND = -32002  # MCP's code for an unknown resource
INVALID_PARAMS = -32602

RESOURCES = [
    types.Resource(name="metrics", uri=METRICS_URI, mime_type="application/json",
                   description="Counters, hit rate, injection size and latency percentiles per tool (JSON)."),
    types.Resource(name="stats", uri=STATS_URI, mime_type="application/json",
                   description="Entries per scope, layer and namespace you may read; sizes on disk; outbox backlog."),
]
TEMPLATES = [
    types.ResourceTemplate(name="entry", uri_template=ENTRY_TEMPLATE, mime_type="application/json",
                           description="One memory entry you may read, by id (others: not found)."),
]


def _json(uri: str, data: Any) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[types.TextResourceContents(
        uri=uri, mime_type="application/json", text=json.dumps(data, ensure_ascii=False, separators=(",", ":")))])


def _error(code: int, error: DomainError) -> MCPError:
    info = to_error_info(error)
    return MCPError(code, info.message, info.model_dump())


async def read(app: Any, caller: Any, uri: str) -> types.ReadResourceResult:
    """Raises: MCPError (resource not found, or the structured error as its data)."""
    app.metrics.resource_reads += 1
    if uri == METRICS_URI:
        return _json(uri, {**app.metrics.snapshot(), "retrieval": app.door.recall.metrics.snapshot()})
    if uri == STATS_URI:
        stats = await app.stats(readable_areas(caller))
        return _json(uri, {**stats, "audit": app.audit.snapshot()})
    match = _ENTRY.match(uri)
    if match is None:
        raise MCPError(RESOURCE_NOT_FOUND, f"no resource {uri[:200]}", {"uri": uri[:200]})
    call = Call(caller, new_request_id(), "memory_crud", "read")
    if Skill.CRUD not in caller.skills:  # word for word an unknown id: says nothing about entries or skills
        await app.audit.record(audit_event(call, "read", None, None, match.group(1), "denied",
                                           format_ts(utc_now()), skill=Skill.CRUD.value))
        raise _error(RESOURCE_NOT_FOUND, NotFound(f"no entry {match.group(1)}", id=match.group(1)))
    try:
        entry = await app.door.memories.by_id(call, match.group(1))
    except DomainError as exc:
        raise _error(RESOURCE_NOT_FOUND if exc.code == "NOT_FOUND" else INVALID_PARAMS, exc) from None
    return _json(uri, wire_record(entry))
