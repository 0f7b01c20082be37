"""Where the hook helper's work goes: the embedded store, through the application's use cases
(`LocalDoor`, the door the MCP tools go through), or a team's shared `serve --http`, through its
MCP tools under the developer's own bearer token (`RemoteDoor`). The hook events (events.py) ask
the same four things of either: recall for a prompt, list a place, log turns, reflect a session.

A remote server that cannot be reached raises `Unreachable` (the events keep what they should have
captured for later); a tool that refuses raises `Refused` with the tool's code and message.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Sequence
from typing import Any, Protocol

from agent_memory.application import Application
from agent_memory.application.memories import ListRequest, Place
from agent_memory.application.sessions import LogTurns, Reflect
from agent_memory.contracts.export_lines import parse_line
from agent_memory.core.access.identity import parse_identity
from agent_memory.core.model.commands import Call
from agent_memory.core.model.errors import DomainError, Forbidden
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.model.models import ALL_SKILLS, Caller, Entry, ListFilters, Scope
from agent_memory.core.model.rules import Limits
from agent_memory.core.model.statements import Turn
from agent_memory.core.recall.retrieval import RetrievalRequest
from agent_memory.hooks import token_file

REMOTE_SECONDS = 3.0  # a remote call's limit: well inside the shortest hook's (UserPromptSubmit)


class Refused(Exception):
    """A tool refused the hook's call: `code: message`, as the tool answered."""


class Unreachable(Exception):
    """The team's server did not answer (down, refused, timed out, or the network): nothing was done."""


class Door(Protocol):
    caller: Caller  # who the hooks work as (the launch identity, or the token's)

    async def recall(self, caller: Caller, request: RetrievalRequest) -> str: ...

    async def listed(self, caller: Caller, scope: Scope, namespace: str, filters: ListFilters,
                     limit: int) -> list[Entry]: ...

    async def log(self, caller: Caller, request: LogTurns) -> None: ...

    async def reflect(self, caller: Caller, request: Reflect) -> None: ...


def _said(error: DomainError) -> str:
    return f"{error.code}: {error.message}"


class LocalDoor:
    """The embedded store, through the application's use cases as `caller`."""

    def __init__(self, door: Application, caller: Caller) -> None:
        self._door = door
        self.caller = caller

    @staticmethod
    def _call(caller: Caller, tool: str) -> Call:
        return Call(caller, new_request_id(), tool)  # audit rows name the tool the MCP call would

    async def recall(self, caller: Caller, request: RetrievalRequest) -> str:
        try:
            return (await self._door.recall.retrieve(self._call(caller, "memory_retrieve"), request)).context
        except DomainError as exc:
            raise Refused(_said(exc)) from None

    async def listed(self, caller: Caller, scope: Scope, namespace: str, filters: ListFilters,
                     limit: int) -> list[Entry]:
        try:
            page = await self._door.memories.list(self._call(caller, "memory_crud"),
                                                  ListRequest(Place(scope, namespace), filters, limit=limit))
        except DomainError as exc:
            raise Refused(_said(exc)) from None
        return list(page.items)

    async def log(self, caller: Caller, request: LogTurns) -> None:
        try:
            await self._door.sessions.log(self._call(caller, "memory_reflect"), request)
        except DomainError as exc:
            raise Refused(_said(exc)) from None

    async def reflect(self, caller: Caller, request: Reflect) -> None:
        try:
            await self._door.sessions.reflect(self._call(caller, "memory_reflect"), request)
        except DomainError as exc:
            raise Refused(_said(exc)) from None


def read_token(path: str) -> str:
    """The bearer token in `path` (a private file), else MEMORY_HOOK_TOKEN.

    Raises:
        Refused: no token, or a file others may read."""
    try:
        return token_file.read(path, os.environ)
    except ValueError as exc:
        raise Refused(f"CONFIG: {exc}") from None


def token_caller(token: str) -> Caller:
    """Who a bearer token names (its claims, read, not verified: the server verifies it).

    Raises:
        Refused: not a token of this server's form."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return parse_identity({k: claims[k] for k in ("agent_id", "system_type", "team")}, default_skills=ALL_SKILLS)
    except (IndexError, KeyError, TypeError, ValueError, Forbidden):
        raise Refused("CONFIG: the hook token is not an agent-memory token (mint one with agent-memory token "
                      "issue)") from None


class RemoteDoor:
    """A team's `serve --http`, through its MCP tools under a bearer token: a client session per
    call, opened and closed in the calling task (the SDK's sessions are bound to the task that
    opened them, and the helper serves each hook in a task of its own)."""

    def __init__(self, url: str, token: str, limits: Limits) -> None:
        self._url, self._token, self._limits = url, token, limits
        self.caller = token_caller(token)

    async def _tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        import anyio
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        try:
            with anyio.fail_after(REMOTE_SECONDS):
                async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {self._token}"},
                                               timeout=REMOTE_SECONDS) as http,
                            Client(streamable_http_client(self._url, http_client=http)) as client):
                    result = await client.call_tool(name, arguments)
        except Exception as exc:  # noqa: BLE001 - any failure to get an answer: down, refused, timed out
            raise Unreachable(f"the team server at {self._url} did not answer ({exc.__class__.__name__})") from None
        data = result.structured_content or {}
        errors = data.get("errors") or []
        if result.is_error or errors:
            first = errors[0] if errors else {"code": "INTERNAL", "message": "the tool failed"}
            raise Refused(f"{first.get('code')}: {first.get('message')}")
        return data

    async def recall(self, caller: Caller, request: RetrievalRequest) -> str:
        arguments: dict[str, Any] = {"query": request.query, "namespaces": list(request.namespaces)}
        if request.max_chars is not None:
            arguments["max_chars"] = request.max_chars
        if request.min_score is not None:
            arguments["min_score"] = request.min_score
        if request.leave_out_session:
            arguments["exclude_session_id"] = request.leave_out_session
        return str((await self._tool("memory_retrieve", arguments)).get("context") or "")

    async def listed(self, caller: Caller, scope: Scope, namespace: str, filters: ListFilters,
                     limit: int) -> list[Entry]:
        wanted: dict[str, Any] = {}
        if filters.layer is not None:
            wanted["layer"] = filters.layer.value
        if filters.tags:
            wanted["tags"] = list(filters.tags)
        if filters.domain is not None:
            wanted["domain"] = filters.domain.value
        data = await self._tool("memory_crud", {"action": "list", "scope": scope.value, "namespace": namespace,
                                                "filters": wanted, "limit": limit})
        entries = []
        for item in data.get("items") or []:
            try:
                entries.append(parse_line(json.dumps(item), self._limits))
            except ValueError:
                continue  # a record this version cannot read: the block goes without it
        return entries

    async def log(self, caller: Caller, request: LogTurns) -> None:
        await self._tool("memory_reflect", {"action": "log", "session_id": request.session_id,
                                            "namespace": request.namespace, "turns": _turns(request.turns),
                                            **({"domain": request.domain.value} if request.domain else {})})

    async def reflect(self, caller: Caller, request: Reflect) -> None:
        await self._tool("memory_reflect", {"action": "reflect", "session_id": request.session_id,
                                            "namespace": request.namespace})


def _turns(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    return [{"role": t.role, "content": t.content, **({"name": t.name} if t.name else {}),
             **({"at": t.at} if t.at else {})} for t in turns]


