"""Running the server on a transport."""

from __future__ import annotations

import sys

import anyio
import structlog
import uvicorn
from starlette.applications import Starlette

from agent_memory.auth import load_secret
from agent_memory.config import Settings
from agent_memory.http import BearerAuth
from agent_memory.logging import configure_logging
from agent_memory.stdio_transport import stdio_transport
from agent_memory.tools.server import ToolSpec, create_server

log = structlog.get_logger("agent_memory")


def serve_stdio(settings: Settings, *, extra_tools: tuple[ToolSpec, ...] = ()) -> None:
    """Serve MCP over stdin/stdout until the client closes the connection."""
    configure_logging(settings.log_level, settings.log_format, settings.log_dir)
    server = create_server(settings, extra_tools=extra_tools)

    async def run() -> None:
        log.info("server_starting", transport="stdio", store=settings.backend, sqlite=settings.sqlite_file)
        async with stdio_transport() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        log.info("server_stopped", transport="stdio")

    anyio.run(run)


def http_app(settings: Settings, *, extra_tools: tuple[ToolSpec, ...] = ()) -> BearerAuth:
    """The ASGI app: MCP streamable HTTP at /mcp (both protocol generations: 2025-11-25 clients
    get sessions, 2026-07-28 clients none), behind bearer-token authentication.

    Raises:
        ConfigError: the auth secret is unusable.
    """
    server = create_server(settings, extra_tools=extra_tools)
    starlette: Starlette = server.streamable_http_app(
        streamable_http_path="/mcp",
        host=settings.http_host,
        max_request_body_size=settings.http_max_request_bytes,
    )
    return BearerAuth(starlette, load_secret(settings))


def serve_http(settings: Settings, *, extra_tools: tuple[ToolSpec, ...] = ()) -> None:
    """Serve MCP streamable HTTP until interrupted."""
    configure_logging(settings.log_level, settings.log_format, settings.log_dir)
    app = http_app(settings, extra_tools=extra_tools)
    config = uvicorn.Config(app, host=settings.http_host, port=settings.http_port, log_config=None,
                            access_log=False, lifespan="on", timeout_graceful_shutdown=5)
    log.info("server_starting", transport="http", host=settings.http_host, port=settings.http_port,
             store=settings.backend, sqlite=settings.sqlite_file)
    uvicorn.Server(config).run()
    log.info("server_stopped", transport="http")


def serve(settings: Settings, *, extra_tools: tuple[ToolSpec, ...] = ()) -> None:
    # Background indexing (embedding, Chroma) runs in threads of this process; a short GIL switch
    # interval keeps it from delaying request handling by whole 5 ms slices.
    sys.setswitchinterval(0.0005)
    if settings.transport == "http":
        serve_http(settings, extra_tools=extra_tools)
    else:
        serve_stdio(settings, extra_tools=extra_tools)
