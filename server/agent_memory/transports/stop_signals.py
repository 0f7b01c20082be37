"""Stop signals (SIGINT, SIGTERM) that arrive while no transport listens for them: kept for the
transport to act on once it does, from the first moment of a server's process (a stdio server
answers the handshake before the SDK is imported, and a host may stop it right after)."""

from __future__ import annotations

import os
import signal
import threading

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
held: list[int] = []  # stop signals that arrived while no transport was listening for them


def hold_stop_signals() -> None:
    """Keep a SIGINT/SIGTERM that arrives while starting or after stopping for the transport to act
    on, instead of dying of it mid-start (exit 143) or printing a KeyboardInterrupt traceback."""
    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            signal.signal(sig, _hold)


def _hold(signum: int, frame: object) -> None:
    """Keep the first stop signal; a second one while nothing listens (a stop that hangs) ends the
    process with the signal's default action, as an operator pressing Ctrl-C twice expects."""
    held.append(signum)
    if len(held) > 1:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
