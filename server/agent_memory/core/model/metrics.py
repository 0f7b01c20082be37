"""Counters and latency percentiles per tool, kept in process (for `memory://metrics` and the
periodic metrics log line)."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

WINDOW = 2048  # latencies kept per tool for percentiles


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


@dataclass
class ToolStats:
    calls: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    latencies_ms: deque[float] = field(default_factory=lambda: deque(maxlen=WINDOW))


class Metrics:
    def __init__(self) -> None:
        self._tools: dict[str, ToolStats] = {}
        self.resource_reads = 0

    def observe(self, tool: str, outcome: str, duration_ms: float) -> None:
        stats = self._tools.setdefault(tool, ToolStats())
        stats.calls += 1
        stats.outcomes[outcome] += 1
        stats.latencies_ms.append(duration_ms)

    def snapshot(self) -> dict[str, object]:
        tools: dict[str, object] = {}
        for name, stats in sorted(self._tools.items()):
            window = list(stats.latencies_ms)
            tools[name] = {
                "calls": stats.calls,
                "outcomes": dict(sorted(stats.outcomes.items())),
                "latency_ms": {"p50": round(percentile(window, 0.5), 3), "p95": round(percentile(window, 0.95), 3),
                               "p99": round(percentile(window, 0.99), 3), "window": len(window)},
            }
        return {"tools": tools, "resource_reads": self.resource_reads}
