"""The MCP server's lifespan state (`ServerState`): what answering `initialize`, `tools/list` and
the prompts needs (the settings and the launch identity) at once, the opened app for everything
else, and when the vector runtime's load may start.

A stdio server opens its store beside the handshake (`opening`): the services are imported on a
worker thread and the store opens while the host's `initialize` and `tools/list` are answered,
and the vector load (a core for about a second) waits until the handshake's last answer is on its
way, the first call or resource read, or `VECTORS_AT_THE_LATEST_SECONDS` after the store opened.
Any other server opens first (`opened`). The dispatcher sees one type either way and never pokes
the vector load itself: it says what happened (`handshake_answered`, `app`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from agent_memory.config import Settings

if TYPE_CHECKING:  # the services, the store and the tools' code are imported once a server opens
    from agent_memory.bootstrap import App

# Deferred vector load (stdio): how long after answering tools/list (time for the answer to be
# written before the load takes a core and the GIL), and at the latest after the store opened.
VECTORS_AFTER_LIST_SECONDS = 0.05
VECTORS_AT_THE_LATEST_SECONDS = 1.0


class ServerState:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.launch_caller = settings.launch_caller()
        self._app: App | None = None
        self._ready = anyio.Event()
        self._vectors_wanted = False

    async def app(self) -> App:
        """The opened app, once it is (a call or a resource read may need the vectors: their load
        starts now, if it had not)."""
        self._want_vectors()
        await self._ready.wait()
        assert self._app is not None
        return self._app

    def handshake_answered(self) -> None:
        """`tools/list` is answered: the vector load may start once the answer is on its way."""
        asyncio.get_running_loop().call_later(VECTORS_AFTER_LIST_SECONDS, self._want_vectors)

    def ready(self, app: App, *, vectors_at_the_latest: float | None) -> None:
        """The store is open. `vectors_at_the_latest`: seconds after which the vector load starts
        whatever happens (None: it was not deferred, `App.start_vectors` does nothing)."""
        self._app = app
        self._ready.set()
        if self._vectors_wanted:
            app.start_vectors()
        elif vectors_at_the_latest is not None:
            asyncio.get_running_loop().call_later(vectors_at_the_latest, app.start_vectors)

    def _want_vectors(self) -> None:
        if self._app is not None:
            self._app.start_vectors()  # idempotent
        else:
            self._vectors_wanted = True


def _import_services() -> None:
    import agent_memory.bootstrap  # noqa: F401
    import agent_memory.tools.crud_tool  # noqa: F401
    import agent_memory.tools.reflect_tool  # noqa: F401
    import agent_memory.tools.resources  # noqa: F401
    import agent_memory.tools.retrieve_tool  # noqa: F401


@asynccontextmanager
async def opened(settings: Settings, on_open: Callable[[App | None], None] | None) -> AsyncIterator[ServerState]:
    """The store opened before the server answers anything."""
    from agent_memory.bootstrap import open_app

    state = ServerState(settings)
    async with open_app(settings) as app:
        if on_open is not None:
            on_open(app)
        try:
            state.ready(app, vectors_at_the_latest=None)
            yield state
        finally:
            if on_open is not None:
                on_open(None)


@asynccontextmanager
async def opening(settings: Settings, on_open: Callable[[App | None], None] | None) -> AsyncIterator[ServerState]:
    """Answer the handshake while the services are imported (on a worker thread) and the store
    opens; a store that cannot be opened still ends the server with its ConfigError (raised out of
    the session, as when it was opened first)."""
    state = ServerState(settings)
    closing = anyio.Event()

    async def open_and_hold() -> None:
        await anyio.to_thread.run_sync(_import_services)
        from agent_memory.bootstrap import open_app

        async with open_app(settings, defer_vectors=True) as app:
            if on_open is not None:
                on_open(app)
            try:
                state.ready(app, vectors_at_the_latest=VECTORS_AT_THE_LATEST_SECONDS)
                await closing.wait()
            finally:
                if on_open is not None:
                    on_open(None)

    async with anyio.create_task_group() as tg:
        tg.start_soon(open_and_hold)
        try:
            yield state
        finally:
            closing.set()
