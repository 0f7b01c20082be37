"""Work a hook starts but need not see finished: a session's reflection, which a local model can make
take longer than the host gives its hook (SessionEnd: 12 s for Claude Code, about 2 s for Codex).
The hook waits for it until shortly before its own deadline; past that it is answered, and the work
goes on in the hook helper's task group (what it says then goes to the helper's log). Without a
task group (before the helper serves) or a deadline (spooled and kept capture), the work is simply
awaited."""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable

import anyio
import structlog
from anyio.abc import TaskGroup

log = structlog.get_logger("agent_memory.hooks")

ANSWER_SECONDS = 0.5  # kept from the hook's deadline: sending the answer, the hook printing it


def deadline_of(value: object) -> float | None:
    """A hook's deadline from its request (epoch seconds), or None when it names none usable."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


class Later:
    def __init__(self) -> None:
        self._group: TaskGroup | None = None

    def attach(self, group: TaskGroup | None) -> None:
        """Where work that outlasts its hook goes on (None: nowhere, it is awaited)."""
        self._group = group

    async def run(self, work: Callable[[], Awaitable[str]], deadline: float | None) -> str:
        """What `work` returns (a note for the hook) when it finishes by `deadline` (epoch seconds);
        "" when it goes on after the hook is answered (a note it returns later is logged)."""
        if self._group is None or deadline is None:
            return await work()
        done = anyio.Event()
        said: list[str] = []
        late = False

        async def go() -> None:
            try:
                said.append(await work())
            except Exception:  # a child's failure must not stop the helper's task group
                log.exception("hook_work_failed")
                said.append("failed (see the hook helper's log)")
            finally:
                done.set()
                if late and said[0]:
                    log.warning("hook_refused", reason=said[0][:300], after_answer=True)

        self._group.start_soon(go)
        with anyio.move_on_after(max(0.0, deadline - ANSWER_SECONDS - time.time())):
            await done.wait()
        if done.is_set():
            return said[0]
        late = True
        log.info("hook_work_continues")
        return ""
