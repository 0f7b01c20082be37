"""Starting the server from a command (`agent-memory serve`, `agent-memory console`): the one place
where a start that fails becomes its exit code. The transports themselves are in `serve.py`."""

from __future__ import annotations

import sys
from collections.abc import Callable

from agent_memory.config import Settings

EXIT_OK, EXIT_UNAVAILABLE = 0, 3


def run_server(settings: Settings, *, announce: Callable[[], None] | None = None) -> int:
    """Serve `settings` until stopped: 0; 3, with one line on stderr, when the HTTP address cannot
    be bound or the HTTP server did not start. With `announce` (the console's sign-in URL), the
    HTTP address and the store are checked first and `announce` runs between the checks and the
    serving, so nothing is announced that cannot work.

    Raises:
        ConfigError: the store cannot be opened as configured (the command's usage error, exit 2).
    """
    from agent_memory.serve import PortUnavailable, StartFailed, bind_http, check_store, serve

    try:
        if announce is not None:
            import anyio

            bind_http(settings.http_host, settings.http_port).close()
            anyio.run(check_store, settings)
            announce()
        serve(settings)
    except (PortUnavailable, StartFailed) as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    return EXIT_OK
