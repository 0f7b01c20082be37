"""Per-caller token buckets: one budget per caller (team and agent id) for every way in, the MCP
tools and the console's API alike."""

from __future__ import annotations

import math
from collections import OrderedDict

from agent_memory.core.model.errors import RateLimited
from agent_memory.core.model.models import Caller

MAX_TRACKED_CALLERS = 10_000


def caller_key(caller: Caller) -> str:
    """The bucket a caller draws on: an agent id is only unique within its team."""
    return f"{caller.team}/{caller.agent_id}"


class RateLimiter:
    """`rate` tokens per second refill each caller's bucket of `burst` tokens; a call takes one.
    A rate of 0 disables limiting."""

    def __init__(self, rate: float, burst: int) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def acquire(self, key: str, now: float) -> float | None:
        """Take a token for `key` at monotonic time `now`. Returns None when allowed, else the
        seconds until a token will be available, rounded up to the millisecond (never 0: a
        client that waits that long is let in)."""
        if self._rate <= 0:
            return None
        tokens, last = self._buckets.pop(key, (self._burst, now))
        tokens = min(self._burst, tokens + (now - last) * self._rate)
        if tokens >= 1.0:
            self._remember(key, tokens - 1.0, now)
            return None
        self._remember(key, tokens, now)
        return max(0.001, math.ceil((1.0 - tokens) / self._rate * 1000) / 1000)

    def take(self, caller: Caller, now: float) -> None:
        """One call by `caller` at monotonic time `now`.

        Raises:
            RateLimited: the caller's bucket is empty (`details.retry_after_seconds`).
        """
        wait = self.acquire(caller_key(caller), now)
        if wait is not None:
            raise RateLimited(f"too many calls from {caller.agent_id}; retry in {wait:.2f} s",
                              retry_after_seconds=wait)

    def _remember(self, key: str, tokens: float, now: float) -> None:
        self._buckets[key] = (tokens, now)
        if len(self._buckets) > MAX_TRACKED_CALLERS:
            self._buckets.popitem(last=False)  # least recently seen; it restarts with a full bucket
