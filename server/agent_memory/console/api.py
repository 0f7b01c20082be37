"""The console's JSON API under /console/api/: each handler reads its request into the
application's typed requests and calls the application (`App.memories`, `App.recall`), the door
the MCP tools go through, so the permission gate and the audit are the tools' own. No SQL here."""

from __future__ import annotations

import json
import math
from typing import Any

from starlette.requests import Request

from agent_memory.application.inspection import warnings_since_last_call
from agent_memory.bootstrap import App
from agent_memory.console.auth import SignedIn
from agent_memory.contracts.crud import UpdateItem
from agent_memory.contracts.crud_requests import entry_change
from agent_memory.contracts.errors import check_unicode, parse_model
from agent_memory.contracts.records import wire_record
from agent_memory.contracts.retrieve import MemoryRetrieveArgs
from agent_memory.contracts.retrieve_requests import retrieval_request, retrieve_payload
from agent_memory.core.access.visibility import readable_areas
from agent_memory.core.memories.lineage import Restoration
from agent_memory.core.memories.reconcile import Choice
from agent_memory.core.memories.trail import visible_trail
from agent_memory.core.model.commands import Removal
from agent_memory.core.model.errors import Forbidden, InvalidParams
from agent_memory.core.model.models import Domain, Layer, ListFilters, Scope, Skill, Source
from agent_memory.core.ports import AuditQuery

EDITABLE = ("content", "tags", "priority", "confidence", "layer", "expires_at")
AUDIT_TRAIL_LIMIT = 500
CONFLICT_QUEUE_LIMIT = 50


def _need(signed: SignedIn, skill: Skill) -> None:
    if skill not in signed.caller.skills and not signed.caller.operator:
        raise Forbidden(f"agent {signed.caller.agent_id} is not granted the {skill.value} skill", skill=skill.value)


def _choice(value: str | None, allowed: type, name: str) -> Any:
    if value in (None, ""):
        return None
    try:
        return allowed(value)
    except ValueError:
        names = ", ".join(v.value for v in allowed)
        raise InvalidParams(f"{name} must be one of {names}", field=name) from None


def _flag(value: str | None, name: str) -> bool | None:
    if value in (None, ""):
        return None
    if value not in ("true", "false"):
        raise InvalidParams(f"{name} must be true or false", field=name)
    return value == "true"


class RequestRefused(InvalidParams):
    """INVALID_PARAMS answered with another HTTP status than 400 (413: too large, 405: wrong method)."""

    def __init__(self, status: int, message: str, **details: Any) -> None:
        super().__init__(message, **details)
        self.status = status


def _limit(value: str | None, default: int, most: int) -> int:
    if value in (None, ""):
        return default
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= most:  # not "²", which int() refuses
        raise InvalidParams(f"limit must be 1-{most}", field="limit")
    return int(value)


def _too_large(most: int) -> RequestRefused:
    return RequestRefused(413, f"the request body is larger than {most} bytes (http_max_request_bytes)",
                          field="body", limit=most)


async def _body(request: Request, most: int) -> dict[str, Any]:
    """The JSON object of the request body, read up to `most` bytes (the MCP endpoint's limit).

    Raises:
        InvalidParams: not a JSON object, or text that is not valid Unicode (413: over `most` bytes).
    """
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > most:
        raise _too_large(most)
    raw = bytearray()
    async for chunk in request.stream():  # a chunked body declares no length
        raw += chunk
        if len(raw) > most:
            raise _too_large(most)
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested too deeply
        raise InvalidParams("the request body must be a JSON object", field="body") from None
    if not isinstance(body, dict):
        raise InvalidParams("the request body must be a JSON object", field="body")
    check_unicode(body, "body")
    return body


async def whoami(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
    claims = signed.claims.as_dict()
    return {**claims, "operator": signed.caller.operator}


async def browse(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
    _need(signed, Skill.CRUD)
    q = request.query_params
    scope = _choice(q.get("scope"), Scope, "scope")
    filters = ListFilters(
        layer=_choice(q.get("layer"), Layer, "layer"),
        tags=tuple(t.strip() for t in (q.get("tags") or "").split(",") if t.strip()),
        source=_choice(q.get("source"), Source, "source"),
        owner_agent_id=q.get("owner") or None,
        conflict=_flag(q.get("conflict"), "conflict"),
        domain=_choice(q.get("domain"), Domain, "domain"),
    )
    page = await app.door.memories.browse(signed.call("list"), scopes=(scope,) if scope else (),
                                     namespace=(q.get("namespace") or "").strip("/") or None, filters=filters,
                                     superseded=_flag(q.get("superseded"), "superseded"),
                                     cursor=q.get("cursor") or None, limit=_limit(q.get("limit"), 25, 100))
    return {"items": [wire_record(e) for e in page.items], "next_cursor": page.next_cursor,
            "has_more": page.has_more}


async def entry(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
    """One entry (read as `memory_crud read` reads it) and its own audit trail."""
    _need(signed, Skill.CRUD)
    found = await app.door.memories.by_id(signed.call("read"), request.path_params["entry_id"])
    # every row of the entry (the store returns the oldest first), then the newest the caller may see
    rows = await app.operator.audit_rows(AuditQuery(entry_id=found.id))
    trail = visible_trail(signed.caller, rows, AUDIT_TRAIL_LIMIT)
    # its history: what replaced it is `superseded_by`; what it replaced (readable facts), oldest first
    replaced = (await app.door.lineage.replaced(signed.call("read"), [found.id])).get(found.id, ())
    return {"entry": wire_record(found), "audit": trail, "supersedes": [old.as_dict() for old in replaced]}


async def edit(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
    """`memory_crud update` of one entry; `if_match` is required (the console always knows it)."""
    _need(signed, Skill.CRUD)  # before the entry is looked up (and its reading audited)
    body = await _body(request, app.settings.http_max_request_bytes)
    unknown = sorted(set(body) - set(EDITABLE) - {"if_match"})
    if unknown:
        raise InvalidParams(f"{unknown[0]} cannot be edited here", field=unknown[0])
    if not body.get("if_match"):
        raise InvalidParams("if_match (the etag you edited) is required", field="if_match")
    item = parse_model(UpdateItem, {"id": request.path_params["entry_id"], "if_match": body["if_match"],
                                    **{k: body[k] for k in EDITABLE if k in body}})
    return {"entry": wire_record(await app.door.memories.one(signed.call(), "update", entry_change(item)))}


async def delete(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
    _need(signed, Skill.CRUD)
    entry_id = request.path_params["entry_id"]
    if_match = request.query_params.get("if_match")
    if not if_match:
        raise InvalidParams("if_match (the etag you saw) is required", field="if_match")
    deleted = await app.door.memories.one(signed.call(), "delete", Removal(entry_id, if_match))
    return {"deleted": deleted.id}


async def unsupersede(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
    """`memory_crud unsupersede` of one fact a later fact replaced; `if_match` is required."""
    _need(signed, Skill.CRUD)
    body = await _body(request, app.settings.http_max_request_bytes)
    unknown = sorted(set(body) - {"if_match"})
    if unknown:
        raise InvalidParams(f"{unknown[0]} is not taken here; send only if_match", field=unknown[0])
    if not isinstance(body.get("if_match"), str) or not body["if_match"]:
        raise InvalidParams("if_match (the etag you saw) is required", field="if_match")
    restored = await app.door.memories.one(signed.call(), "unsupersede",
                                      Restoration(request.path_params["entry_id"], body["if_match"]))
    return {"entry": wire_record(restored)}


async def conflicts(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
    """Pending conflict entries the caller may read, each beside its original."""
    _need(signed, Skill.CRUD)
    found = await app.door.memories.conflicts(signed.call(), request.query_params.get("cursor") or None,
                                         CONFLICT_QUEUE_LIMIT)
    # an original that is gone (deleted or expired) is null: only "keep" is left
    pairs = [{"conflict": wire_record(pending), "original": wire_record(original) if original else None}
             for pending, original in found.pairs]
    return {"items": pairs, "next_cursor": found.next_cursor, "has_more": found.next_cursor is not None}


async def resolve(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
    _need(signed, Skill.CRUD)
    body = await _body(request, app.settings.http_max_request_bytes)
    choice = _choice(body.get("choice"), Choice, "choice")
    if choice is None:
        raise InvalidParams("choice is required", field="choice")
    etag = body.get("original_etag")
    if not isinstance(etag, str) or not etag:
        raise InvalidParams("original_etag is required", field="original_etag")
    content = body.get("content")
    if content is not None and not isinstance(content, str):
        raise InvalidParams("content must be text", field="content")
    done = await app.door.memories.reconcile(signed.call(), request.path_params["entry_id"], choice, original_etag=etag,
                                       merged_content=content)
    return {"original": wire_record(done.original), "removed_conflict_id": done.removed_conflict_id}


async def search(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
    """`memory_retrieve`, as the tool runs it (each item with its score parts)."""
    _need(signed, Skill.RETRIEVE)
    q = request.query_params
    arguments: dict[str, Any] = {"query": q.get("q", ""), "mode": q.get("mode") or "hybrid",
                                 "limit": _limit(q.get("limit"), 10, 50)}
    if q.get("scope"):
        arguments["scopes"] = [q["scope"]]
    if q.get("min_score"):
        try:
            arguments["min_score"] = float(q["min_score"])
        except ValueError:
            raise InvalidParams("min_score must be a number", field="min_score") from None
        if not math.isfinite(arguments["min_score"]):
            raise InvalidParams("min_score must be a number", field="min_score")
    request = retrieval_request(parse_model(MemoryRetrieveArgs, arguments))
    return retrieve_payload(await app.door.recall.retrieve(signed.call("memory_retrieval"), request))


async def metrics(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
    """Tool calls and latency percentiles, retrieval hit rate and injection size, and the store
    (only what the caller may read, unless an operator)."""
    areas = None if signed.caller.operator else readable_areas(signed.caller)
    store = await app.stats(areas)
    return {"tools": app.metrics.snapshot(), "retrieval": app.door.recall.metrics.snapshot(), "store": store}


async def warnings(request: Request, app: App, signed: SignedIn) -> dict[str, Any]:
    """WARNING and ERROR lines new since the last `agent-memory warnings` (operators only: log
    lines name every team). Reading them here does not mark them seen."""
    if not signed.caller.operator:
        raise Forbidden("the server's warnings are shown to operator tokens only")
    if app.settings.log_dir is None:
        return {"since": None, "summary": [], "latest": [], "note": "the list store keeps no log file"}
    report = warnings_since_last_call(app.settings.log_dir, remember=False)
    return {"since": report.since,
            "summary": [{"level": lv, "event": ev, "count": n, "last": last} for lv, ev, n, last in report.summary()],
            "latest": report.lines[-20:]}
