"""The `agent-memory` command's entry point. `agent-memory hook ...` runs on every host event and
must start fast, so it is dispatched before the rest of the command line (and its settings
machinery) is imported."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from agent_memory.hooks.client import main as hook

        return hook(args[1:])
    from agent_memory.cli import main as cli

    return cli(args)


if __name__ == "__main__":
    sys.exit(main())
