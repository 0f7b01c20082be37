"""One MCP session to a running agent-memory, as one identity, usable from sync and async code.

The session lives on an event loop of its own (in a daemon thread, reached through an anyio
blocking portal), so the same link serves async callers on any loop and sync callers in threads
with no loop, and the SDK client is opened and closed in one task as its cancel scopes require.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Future
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread

IDENTITY_KEY = "agent-memory/identity"
MAX_BULK_ITEMS = 10
T = TypeVar("T")


class MemoryToolError(Exception):
    """A tool answered with an error: `code` is the SPEC code (FORBIDDEN, NOT_FOUND, ...)."""

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = dict(details or {})


class MemoryPermissionError(MemoryToolError, PermissionError):
    """The caller may not do this (code FORBIDDEN)."""


def tool_error(error: Mapping[str, Any]) -> MemoryToolError:
    """The exception for one `{code, message, details}` error of a tool answer."""
    code = str(error.get("code", "INTERNAL"))
    cls = MemoryPermissionError if code == "FORBIDDEN" else MemoryToolError
    return cls(code, str(error.get("message", "")), error.get("details") or {})


def installed_command() -> str:
    """The `agent-memory` console script next to this Python, else the one on PATH."""
    found = shutil.which("agent-memory", path=str(Path(sys.executable).parent)) or shutil.which("agent-memory")
    if not found:
        raise FileNotFoundError(
            "the agent-memory command is not installed (from a clone of agent-memory: pip install .)")
    return found


def token_identity(token: str) -> dict[str, Any]:
    """The identity a bearer token names (read, not verified: the server verifies it).

    Raises:
        ValueError: the text is not an agent-memory token.
    """
    parts = token.split(".")
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        return {"agent_id": str(claims["agent_id"]), "system_type": str(claims["system_type"]),
                "team": str(claims["team"])}
    except (IndexError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError("not an agent-memory bearer token (am1.<claims>.<signature>)") from exc


def _first_cause(exc: BaseException) -> str:
    """The first leaf of an exception group, as 'Type: message'."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _check_identity(identity: Mapping[str, Any]) -> dict[str, Any]:
    missing = [k for k in ("agent_id", "system_type", "team") if not identity.get(k)]
    if missing:
        raise ValueError(f"identity needs {', '.join(missing)} (and may give skills)")
    return dict(identity)


class MemoryLink:
    """An MCP client session to agent-memory as one identity.

    Build one with `MemoryLink.stdio(...)` (launches `agent-memory serve`), `MemoryLink.http(...)`
    (a shared server and a bearer token) or `MemoryLink(server, ...)` (anything `mcp.Client`
    accepts, e.g. an in-process server). It connects on first use; `close()` ends the session.
    """

    def __init__(self, target: Any, *, agent_id: str, team: str, identity: Mapping[str, Any] | None = None,
                 mode: str = "auto", timeout: float = 60.0,
                 client_factory: Callable[[AsyncExitStack], Awaitable[Any]] | None = None) -> None:
        self.agent_id = agent_id
        self.team = team
        self._target = target
        self._meta = {IDENTITY_KEY: _check_identity(identity)} if identity is not None else None
        self._mode = mode
        self._timeout = timeout
        self._client_factory = client_factory
        self._lock = threading.Lock()
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._thread: threading.Thread | None = None
        self._client: Any = None
        self._closed = False

    @classmethod
    def in_process(cls, server: Any, identity: Mapping[str, Any], *, mode: str = "auto",
                   timeout: float = 60.0) -> MemoryLink:
        """An agent-memory server object in this process (`agent_memory.tools.server.create_server`)."""
        ident = _check_identity(identity)
        return cls(server, agent_id=str(ident["agent_id"]), team=str(ident["team"]), identity=ident, mode=mode,
                   timeout=timeout)

    @classmethod
    def stdio(cls, identity: Mapping[str, Any], *, command: str | None = None, args: Sequence[str] = ("serve",),
              env: Mapping[str, str] | None = None, mode: str = "auto", timeout: float = 60.0) -> MemoryLink:
        """Launch `agent-memory serve` on stdio; every request carries `identity` in its `_meta`
        (`{"agent_id", "system_type", "team", "skills"?}`; trusted on stdio).

        Args:
            identity: the caller this link speaks as.
            command: the agent-memory executable (default: the installed console script).
            args: its arguments (default `serve`).
            env: the server's environment (default: this process's; `MEMORY_*` settings apply).
                The server logs warnings and errors only (into this program's stderr) unless
                `MEMORY_LOG_LEVEL` says otherwise.
        """
        from mcp import StdioServerParameters

        ident = _check_identity(identity)
        server_env = {"MEMORY_LOG_LEVEL": "warning", **(os.environ if env is None else env)}
        params = StdioServerParameters(command=command or installed_command(), args=list(args), env=server_env)
        return cls(params, agent_id=str(ident["agent_id"]), team=str(ident["team"]), identity=ident, mode=mode,
                   timeout=timeout)

    @classmethod
    def http(cls, url: str, token: str, *, mode: str = "auto", timeout: float = 60.0) -> MemoryLink:
        """A shared `agent-memory serve --http` at `url` (ending in /mcp), as the token's identity."""
        claims = token_identity(token)

        async def open_http(stack: AsyncExitStack) -> Any:
            import httpx2
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout))
            return await stack.enter_async_context(
                Client(streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=timeout))

        return cls(url, agent_id=claims["agent_id"], team=claims["team"], mode=mode, timeout=timeout,
                   client_factory=open_http)

    # -- lifecycle: the session lives on an event loop in a daemon thread (an unclosed link never
    # holds the interpreter open at exit; a stdio server then sees its stdin close and stops) --

    async def _open(self, stack: AsyncExitStack) -> Any:
        from mcp import Client

        if self._client_factory is not None:
            return await self._client_factory(stack)
        return await stack.enter_async_context(Client(self._target, mode=self._mode,
                                                      read_timeout_seconds=self._timeout))

    def _run_loop(self, ready: Future[anyio.from_thread.BlockingPortal]) -> None:
        async def main() -> None:
            async with anyio.from_thread.BlockingPortal() as portal, AsyncExitStack() as stack:
                self._client = await self._open(stack)
                ready.set_result(portal)
                await portal.sleep_until_stopped()

        try:
            anyio.run(main)
        except BaseException as exc:  # noqa: BLE001 - reported to whoever waits for the connection
            if not ready.done():
                ready.set_exception(exc)
        finally:
            self._client = None

    def _connect(self) -> anyio.from_thread.BlockingPortal:
        with self._lock:
            if self._closed:
                raise RuntimeError("this agent-memory link is closed")
            if self._portal is None:
                ready: Future[anyio.from_thread.BlockingPortal] = Future()
                thread = threading.Thread(target=self._run_loop, args=(ready,), name="agent-memory-link",
                                          daemon=True)
                thread.start()
                try:
                    self._portal = ready.result(timeout=self._timeout)
                except BaseException as exc:
                    raise ConnectionError(f"could not open an MCP session to agent-memory ({_first_cause(exc)})") \
                        from exc
                self._thread = thread
            return self._portal

    def close_sync(self) -> None:
        """End the session (and the server process on stdio). Safe to call twice."""
        with self._lock:
            self._closed = True
            portal, thread = self._portal, self._thread
            self._portal = self._thread = None
        if portal is None or thread is None:
            return
        try:
            portal.call(portal.stop)
        except RuntimeError:
            pass  # the loop already ended (the server went away)
        thread.join(timeout=self._timeout)

    async def close(self) -> None:
        await anyio.to_thread.run_sync(self.close_sync)

    # -- calls --

    async def _call_on_loop(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        result = await self._client.call_tool(tool, arguments, meta=self._meta)
        data = result.structured_content
        if data is None:  # a protocol-level failure the server reported as text
            text = " ".join(getattr(c, "text", "") for c in result.content)
            return True, {"errors": [{"code": "INTERNAL", "message": text or "no structured answer"}]}
        return bool(result.is_error), data

    def call_sync(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call a tool from a thread without a running loop; returns the structured answer (item
        errors stay in its `errors`).

        Raises:
            MemoryToolError: a request-level tool error (`MemoryPermissionError` for FORBIDDEN).
            ConnectionError: no session could be opened, or the server went away.
            TimeoutError: no answer within the link's timeout.
        """
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        portal = self._connect()
        try:
            failed, data = portal.call(self._call_on_loop, tool, arguments)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise ConnectionError(f"the MCP session to agent-memory has ended ({exc.message})") from exc
            if exc.code == REQUEST_TIMEOUT:
                raise TimeoutError(f"agent-memory did not answer {tool} in time ({exc.message})") from exc
            raise
        if failed:
            raise tool_error((data.get("errors") or [{}])[0])
        return data

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`call_sync` for async callers (any loop): the call runs on the link's loop."""
        return await anyio.to_thread.run_sync(self.call_sync, tool, arguments)

    # -- helpers shared by the integrations --

    @staticmethod
    def raise_item_errors(data: Mapping[str, Any]) -> None:
        """Raise the first item error of a bulk answer, if any."""
        errors = data.get("errors") or []
        if errors:
            raise tool_error(errors[0])

    @staticmethod
    def chunks(items: Sequence[T], size: int = MAX_BULK_ITEMS) -> list[Sequence[T]]:
        """`items` split into bulk requests the server accepts (at most 10 items each)."""
        return [items[i:i + size] for i in range(0, len(items), size)]
