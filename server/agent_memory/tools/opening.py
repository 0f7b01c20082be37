"""A stdio server's store opening beside the handshake: `initialize`, `tools/list` and the
prompts are answered from the settings and the launch identity at once, everything else once the
services are imported (on a worker thread) and the store is open."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.context import ServerRequestContext

from agent_memory.config import Settings

if TYPE_CHECKING:  # the services, the store and the tools' code are imported once a server opens
    from agent_memory.bootstrap import App

# Deferred vector load (stdio): how long after answering tools/list (time for the answer to be
# written before the load takes a core and the GIL), and at the latest after the store opened.
VECTORS_AFTER_LIST_SECONDS = 0.05
VECTORS_AT_THE_LATEST_SECONDS = 1.0


class Opening:
    """A stdio server's lifespan state while its store opens beside the handshake: what answering
    `initialize`, `tools/list` and the prompts needs (the settings and the launch identity) at
    once, the opened app (`opened()`) for everything else."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.launch_caller = settings.launch_caller()
        self.app: App | None = None
        self._ready = anyio.Event()
        self._vectors_wanted = False

    async def opened(self) -> App:
        await self._ready.wait()
        assert self.app is not None
        return self.app

    def start_vectors(self) -> None:
        if self.app is not None:
            self.app.start_vectors()
        else:
            self._vectors_wanted = True

    def ready(self, app: App) -> None:
        self.app = app
        self._ready.set()
        if self._vectors_wanted:
            app.start_vectors()
        else:
            asyncio.get_running_loop().call_later(VECTORS_AT_THE_LATEST_SECONDS, app.start_vectors)


def _import_services() -> None:
    import agent_memory.bootstrap  # noqa: F401
    import agent_memory.tools.crud_tool  # noqa: F401
    import agent_memory.tools.reflect_tool  # noqa: F401
    import agent_memory.tools.resources  # noqa: F401
    import agent_memory.tools.retrieve_tool  # noqa: F401


@asynccontextmanager
async def opening(settings: Settings, on_open: Callable[[App | None], None] | None) -> AsyncIterator[Opening]:
    """Answer the handshake while the services are imported (on a worker thread) and the store
    opens; a store that cannot be opened still ends the server with its ConfigError (raised out of
    the session, as when it was opened first)."""
    opening = Opening(settings)
    closing = anyio.Event()

    async def open_and_hold() -> None:
        await anyio.to_thread.run_sync(_import_services)
        from agent_memory.bootstrap import open_app

        async with open_app(settings, defer_vectors=True) as app:
            if on_open is not None:
                on_open(app)
            try:
                opening.ready(app)
                await closing.wait()
            finally:
                if on_open is not None:
                    on_open(None)

    async with anyio.create_task_group() as tg:
        tg.start_soon(open_and_hold)
        try:
            yield opening
        finally:
            closing.set()


async def opened_app(ctx: ServerRequestContext[Any, Any]) -> App:
    state = ctx.lifespan_context
    return await state.opened() if isinstance(state, Opening) else state
