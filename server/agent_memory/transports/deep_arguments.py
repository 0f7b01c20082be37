"""Tool calls whose arguments nest past the MCP SDK parser's depth limit (about 200 levels).

The SDK answers such a message with a JSON-RPC parse error, which a model never sees. No tool takes
more than a few levels, so the transports cut every array or object deeper than CUT_DEPTH inside
the arguments of a `tools/call` down to an empty one and pass the call on: the tool then refuses
it as INVALID_PARAMS naming the field (contracts/errors.check_depth), a result the caller can read.
Anything else that nests too deeply (or past Python's own recursion limit) is still a parse error.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic_core
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CUT_DEPTH = 40  # past contracts/errors.MAX_ARGUMENT_DEPTH (32), well within the SDK parser's limit
_SDK_DEPTH = 190  # fewer brackets than this cannot nest past the SDK parser's limit (~200)


def cut_deep_tool_call(text: str | bytes) -> dict[str, Any] | None:
    """The `tools/call` request in `text` with its arguments cut to CUT_DEPTH levels, or None when
    `text` is no such request (or nests past what Python's json module can read)."""
    try:
        root = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not (isinstance(root, dict) and root.get("method") == "tools/call" and isinstance(root.get("params"), dict)
            and isinstance(root["params"].get("arguments"), dict)):
        return None
    root["params"]["arguments"] = _cut(root["params"]["arguments"], CUT_DEPTH)
    return root


def _cut(value: object, depth: int) -> object:
    if isinstance(value, dict):
        return {k: _cut(v, depth - 1) for k, v in value.items()} if depth > 0 else {}
    if isinstance(value, list):
        return [_cut(v, depth - 1) for v in value] if depth > 0 else []
    return value


def _too_deep_for_sdk(body: bytes) -> bool:
    if body.count(b"[") + body.count(b"{") < _SDK_DEPTH:  # the common case: a byte count, no parse
        return False
    try:
        pydantic_core.from_json(body)
    except ValueError as exc:
        return "recursion limit" in str(exc)
    return False


class CutDeepToolCalls:
    """ASGI middleware in front of the SDK's /mcp endpoint: a POSTed `tools/call` nested past the
    SDK parser's limit is passed on cut (see the module docstring). Bodies over `max_bytes` pass
    through untouched (the SDK refuses them)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self._app = app
        self._max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self._app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client left: let the app see it
                await self._app(scope, _replay(chunks, receive, last=message), send)
                return
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            more = message.get("more_body", False)
            if more and size > self._max_bytes:  # the rest streams on to the app, which refuses it
                await self._app(scope, _replay(chunks, receive, more=True), send)
                return
        body = b"".join(chunks)
        if _too_deep_for_sdk(body) and (cut := cut_deep_tool_call(body)) is not None:
            body = json.dumps(cut).encode()
        await self._app(scope, _replay([body], receive), send)


def _replay(chunks: list[bytes], receive: Receive, *, more: bool = False, last: Message | None = None) -> Receive:
    """A `receive` that gives the buffered body again (then `last`, if given), then whatever the
    client's `receive` has next (more body, or a disconnect when it comes)."""
    queue: list[Message] = [{"type": "http.request", "body": chunk, "more_body": True} for chunk in chunks]
    if last is not None:
        queue.append(last)
    elif not more:
        queue.append({"type": "http.request", "body": b"", "more_body": False})

    async def replay() -> Message:
        return queue.pop(0) if queue else await receive()

    return replay
