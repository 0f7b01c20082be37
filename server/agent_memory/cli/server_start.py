"""Starting the server from a command (`agent-memory serve`, `agent-memory console`): the one place
where a start that fails becomes its exit code. The transports themselves are in `transports/serve.py`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_memory.config import Settings

if TYPE_CHECKING:  # the console is imported only when it is served
    from agent_memory.console.session import SignInCodes

EXIT_OK, EXIT_UNAVAILABLE = 0, 3


def run_server(settings: Settings, *, announce: Callable[[], None] | None = None,
               codes: SignInCodes | None = None) -> int:
    """Serve `settings` until stopped: 0; 3, with one line on stderr, when the HTTP address cannot
    be bound or the HTTP server did not start. With `announce` (the console's sign-in URL), the
    HTTP address and the store are checked first and `announce` runs between the checks and the
    serving, so nothing is announced that cannot work. `codes`: the console's sign-in codes.

    Raises:
        ConfigError: the store cannot be opened as configured (the command's usage error, exit 2).
    """
    early = None
    if settings.transport != "http" and announce is None:  # stdio: the handshake before the SDK's import
        from agent_memory.transports.stdio_front import answer_first_line

        early = answer_first_line(settings)
    from agent_memory.transports.serve import PortUnavailable, StartFailed, bind_http, check_store, serve

    try:
        if announce is not None:
            import anyio

            bind_http(settings.http_host, settings.http_port).close()
            anyio.run(check_store, settings)
            announce()
        serve(settings, codes=codes, early=early)
    except (PortUnavailable, StartFailed) as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    return EXIT_OK
