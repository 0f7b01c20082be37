"""Running the server on a transport."""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import anyio
import structlog

from agent_memory.config import ConfigError, Settings
from agent_memory.logging import configure_logging
from agent_memory.tools.server import ToolSpec, create_server
from agent_memory.transports.stdio import stdio_transport
from agent_memory.transports.stdio_front import Early
from agent_memory.transports.stop_signals import STOP_SIGNALS, held, hold_stop_signals

if TYPE_CHECKING:  # the HTTP side (uvicorn, starlette, the console) is imported when serving HTTP only
    import uvicorn
    from starlette.types import ASGIApp

    from agent_memory.console.session import SignInCodes

log = structlog.get_logger("agent_memory")

TERMINAL_HINT = ("agent-memory speaks MCP on stdin/stdout: start it from an MCP host (README, 'Attach it to a host'; "
                 "`agent-memory setup claude-desktop|vscode|cursor` prints the config). Ctrl-C stops it.")


class PortUnavailable(Exception):
    """The HTTP address cannot be bound (in use, not allowed, not on this machine); the message says which."""


class StartFailed(Exception):
    """The HTTP server's start-up failed after the checks (the reason is in the log's error record)."""


def serve_stdio(settings: Settings, *, extra_tools: tuple[ToolSpec, ...] = (), early: Early | None = None) -> None:
    """Serve MCP over stdin/stdout until the client closes the connection or SIGINT/SIGTERM
    arrives; either way the session ends as at end of input and the store closes cleanly.

    Raises:
        ConfigError: the store cannot be opened as configured (e.g. PostgreSQL unreachable)."""
    configure_logging(settings.log_level, settings.log_format, settings.log_dir)
    if os.isatty(0):
        print(TERMINAL_HINT, file=sys.stderr, flush=True)
    server = create_server(settings, extra_tools=extra_tools, defer_vectors=True, on_open=_abandon_load_on_close)

    async def run() -> None:
        log.info("server_starting", transport="stdio", store=settings.backend, **_store_fields(settings))
        stop = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_set_on_signal, stop)
            async with stdio_transport(stop, early) as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()
        log.info("server_stopped", transport="stdio")

    try:
        anyio.run(run)
    except BaseExceptionGroup as group:  # the store refused to open (from inside the MCP session's tasks)
        refused = _config_error(group)
        if refused is None:
            raise
        raise refused from None


def _store_fields(settings: Settings) -> dict[str, str]:
    """`stores.store_log_fields`, without importing the stores' adapters for SQLite (a stdio server
    imports them beside the handshake)."""
    if settings.backend != "postgres":
        return {"sqlite": settings.sqlite_file}
    from agent_memory.stores import store_log_fields

    return store_log_fields(settings)


def _abandon_load_on_close(app: Any) -> None:
    """A stdio server's process ends right after the session (cli's `_exit_now`): stopping need not
    wait for a vector load still in flight."""
    vectors = getattr(app, "vectors", None) if app is not None else None
    if vectors is not None and hasattr(vectors, "abandon_load_on_close"):
        vectors.abandon_load_on_close = True


def _config_error(group: BaseExceptionGroup) -> ConfigError | None:
    found: BaseException | None = group.subgroup(ConfigError)
    while isinstance(found, BaseExceptionGroup):
        found = found.exceptions[0]
    return found if isinstance(found, ConfigError) else None


async def _set_on_signal(stop: anyio.Event) -> None:
    try:
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            if held:
                log.info("server_stopping", signal=signal.Signals(held[0]).name)
                stop.set()
            async for signum in signals:
                log.info("server_stopping", signal=signal.Signals(signum).name)
                stop.set()
    finally:
        hold_stop_signals()


def http_app(settings: Settings, *, extra_tools: tuple[ToolSpec, ...] = (), codes: SignInCodes | None = None
             ) -> ASGIApp:
    """The ASGI app: MCP streamable HTTP at /mcp (both protocol generations: 2025-11-25 clients
    get sessions, 2026-07-28 clients none), behind bearer-token authentication; the memory console
    at /console/ (pages open, its API signed in with the same tokens, or with one of `codes`, the
    sign-in codes `agent-memory console` issues).

    Raises:
        ConfigError: the auth secret is unusable.
    """
    from agent_memory.console.app import AppSlot, console_app, with_console
    from agent_memory.transports.auth import load_secret
    from agent_memory.transports.deep_arguments import CutDeepToolCalls
    from agent_memory.transports.http import BearerAuth

    slot = AppSlot()
    server = create_server(settings, extra_tools=extra_tools, on_open=slot.set)
    starlette = server.streamable_http_app(
        streamable_http_path="/mcp",
        host=settings.http_host,
        max_request_body_size=settings.http_max_request_bytes,
    )
    secret = load_secret(settings)
    mcp = CutDeepToolCalls(starlette, settings.http_max_request_bytes)
    console = console_app(slot, secret, server.session_manager.security_settings, codes)  # Host, Origin: as /mcp
    return with_console(BearerAuth(mcp, secret, slot), console)


def _uvicorn_server(config: uvicorn.Config) -> Any:
    """uvicorn, stopping gracefully on SIGINT/SIGTERM without re-raising the signal afterwards
    (which would end the process with 130/143 and a traceback instead of exit 0)."""
    import uvicorn

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            for sig in STOP_SIGNALS:
                signal.signal(sig, self._stop)
            if held:
                self._stop(held[0], None)
            try:
                yield
            finally:
                hold_stop_signals()

        def _stop(self, signum: int, frame: object) -> None:
            if not self.should_exit:
                log.info("server_stopping", signal=signal.Signals(signum).name)
            self.handle_exit(signum, None)

    return _Server(config)


def bind_http(host: str, port: int) -> socket.socket:
    """The listening socket of `serve --http`, bound before anything is logged as starting.

    Raises:
        PortUnavailable: the address is in use, not allowed or not local.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family, backlog=2048)
    except OSError as exc:
        where = f"{host}:{port}"
        if exc.errno == errno.EADDRINUSE:
            raise PortUnavailable(f"port {port} is already in use on {host} (another server is listening on "
                                  f"{where}); stop it or choose another port with --port or MEMORY_HTTP_PORT") from None
        raise PortUnavailable(f"cannot listen on {where}: {exc.strerror or exc}; choose another address with "
                              "--host/--port (MEMORY_HTTP_HOST, MEMORY_HTTP_PORT)") from None
    return sock


def serve_http(settings: Settings, *, extra_tools: tuple[ToolSpec, ...] = (), codes: SignInCodes | None = None
               ) -> None:
    """Serve MCP streamable HTTP until SIGINT or SIGTERM (then a graceful stop, exit 0).

    Raises:
        PortUnavailable: the address cannot be bound (checked before `server_starting`).
        ConfigError: the store cannot be opened as configured (checked before `server_starting`).
        StartFailed: start-up failed all the same (say, the store went away in between).
    """
    import uvicorn

    configure_logging(settings.log_level, settings.log_format, settings.log_dir)
    app = http_app(settings, extra_tools=extra_tools, codes=codes)
    sock = bind_http(settings.http_host, settings.http_port)
    try:
        anyio.run(check_store, settings)
    except BaseException:
        sock.close()
        raise
    config = uvicorn.Config(app, host=settings.http_host, port=settings.http_port, log_config=None,
                            access_log=False, lifespan="on", timeout_graceful_shutdown=5)
    log.info("server_starting", transport="http", host=settings.http_host, port=settings.http_port,
             store=settings.backend, **_store_fields(settings))
    server = _uvicorn_server(config)
    with sock:
        server.run(sockets=[sock])
    if not server.started:
        raise StartFailed("the HTTP server did not start: the reason is in the log's error record")
    log.info("server_stopped", transport="http")


async def check_store(settings: Settings) -> None:
    """Open the store and close it again, so that one that cannot be opened (PostgreSQL
    unreachable, pgvector missing, an unwritable SQLite directory) is refused in one line, as on
    stdio, before the HTTP server starts (whose start-up would log a traceback instead)."""
    from agent_memory.stores import open_store

    async with open_store(settings):
        pass


def serve(settings: Settings, *, extra_tools: tuple[ToolSpec, ...] = (), codes: SignInCodes | None = None,
          early: Early | None = None) -> None:
    """`early`: what a stdio server read and answered before the SDK was imported (`stdio_front`)."""
    # Everything the server needs is imported (the launcher turned the collector off for that):
    # what exists now lives as long as the process, so it is left out of every later collection.
    gc.freeze()
    gc.enable()
    # Background indexing (embedding, Chroma) runs in threads of this process; a short GIL switch
    # interval keeps it from delaying request handling by whole 5 ms slices.
    sys.setswitchinterval(0.0005)
    hold_stop_signals()
    if settings.transport == "http":
        serve_http(settings, extra_tools=extra_tools, codes=codes)
    else:
        serve_stdio(settings, extra_tools=extra_tools, early=early)
