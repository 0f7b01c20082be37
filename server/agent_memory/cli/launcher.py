"""The `agent-memory` command's entry point. `agent-memory hook ...` runs on every host event and
must start fast, so it is dispatched before the rest of the command line (and its settings
machinery) is imported."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from agent_memory.hooks.client import main as hook

        return hook(args[1:])
    if args[:1] == ["serve"]:
        # A host waits for `serve` to answer: the cyclic garbage collector, run over and over while
        # some thousand modules are imported (pydantic models above all), costs 10-15 % of the
        # start and finds next to nothing. `serve` turns it back on once everything is imported.
        gc.disable()
        _import_structlog_without_rich()
        # Exact vector search is one matrix-vector product per partition (storage/chroma/exact.py):
        # OpenBLAS splits it over every core and spins waiting, which on a loaded machine took its
        # p95 from 1.3 to 8 ms at 10,000 vectors and doubled its CPU. Set before numpy loads.
        if "numpy" not in sys.modules:
            os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from agent_memory.cli.main import main as cli

    return cli(args, own_process=argv is None)


def _import_structlog_without_rich() -> None:
    """structlog imports rich (when installed, as chromadb brings it) only to pick a default
    exception formatter for its console renderer: some 35 ms of a host's wait for `serve`, whose log
    is JSON lines whenever a host reads it. Without rich, a terminal shows plain tracebacks."""
    if "structlog" in sys.modules or "rich" in sys.modules:
        return
    sys.modules["rich"] = None  # type: ignore[assignment]  # import rich -> ImportError, for this import only
    try:
        import structlog  # noqa: F401
    finally:
        del sys.modules["rich"]


if __name__ == "__main__":
    sys.exit(main())
