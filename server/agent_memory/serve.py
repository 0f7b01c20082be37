"""Running the server on a transport."""

from __future__ import annotations

import anyio
import structlog
from mcp.server.stdio import stdio_server

from agent_memory.config import Settings
from agent_memory.logging import configure_logging
from agent_memory.tools.server import ToolSpec, create_server


def serve_stdio(settings: Settings, *, extra_tools: tuple[ToolSpec, ...] = ()) -> None:
    """Serve MCP over stdin/stdout until the client closes the connection."""
    configure_logging(settings.log_level, settings.log_format)
    server = create_server(settings, extra_tools=extra_tools)

    async def run() -> None:
        structlog.get_logger("agent_memory").info(
            "server_starting", transport="stdio", store=settings.backend, sqlite=settings.sqlite_file
        )
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        structlog.get_logger("agent_memory").info("server_stopped", transport="stdio")

    anyio.run(run)
