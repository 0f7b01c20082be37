"""What memory_retrieve returns, and the retrievals counted in process."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_memory.core.memories.lineage import Replaced
from agent_memory.core.model.models import Entry


@dataclass(frozen=True, slots=True)
class RetrievedItem:
    entry: Entry
    text: str
    truncated: bool
    score: float
    parts: dict[str, float]
    supersedes: tuple[Replaced, ...] = ()  # the facts this one replaced that the caller may read


@dataclass(slots=True)
class RetrievalResult:
    items: list[RetrievedItem]
    context: str
    budget_chars: int
    dropped: int
    degraded: list[str]
    min_score: float = 0.0  # the floor applied
    relative_floor: float = 0.0  # the relative floor applied
    keyword_only: int = 0  # readable entries not yet searchable by meaning (searched by keyword only)
    withheld: int = 0  # candidates left out: all when the best was under the floor, else the weak ones
    stages_ms: dict[str, float] = field(default_factory=dict)

    @property
    def used_chars(self) -> int:
        return len(self.context)


@dataclass(slots=True)
class RetrievalMetrics:
    """Kept in process: how many retrievals, how many found something, what they injected, and
    the latency of each stage (sums, for means)."""

    retrievals: int = 0
    hits: int = 0
    injected_chars: int = 0
    stage_ms_total: dict[str, float] = field(default_factory=dict)

    def observe(self, result: RetrievalResult) -> None:
        self.retrievals += 1
        self.hits += 1 if result.items else 0
        self.injected_chars += result.used_chars
        for stage, ms in result.stages_ms.items():
            self.stage_ms_total[stage] = self.stage_ms_total.get(stage, 0.0) + ms

    @property
    def hit_rate(self) -> float:
        return self.hits / self.retrievals if self.retrievals else 0.0

    def snapshot(self) -> dict[str, object]:
        n = self.retrievals or 1
        return {
            "retrievals": self.retrievals,
            "hit_rate": round(self.hit_rate, 4),
            "mean_injected_chars": round(self.injected_chars / n, 1),
            "mean_stage_ms": {k: round(v / n, 3) for k, v in self.stage_ms_total.items()},
        }
