"""Confidence: how sure the store is of an entry, 0.0-1.0 (with `source` and the dates, its provenance).

The contract (docs/tools.md, "Confidence"): a caller's value on `create`/`update` is kept as given; without
one, the default of the entry's source applies (`DEFAULTS`). The engines that write on their own set
theirs: a session turn is `manual` (a tool turn `tool`), 1.0; a compaction summary and a fact or rule
the caller supplies to `memory_reflect` are `reflection`, 0.9; the extractive engine gives 0.6-0.85
by the kind of statement; a sampling model's item its own number (0.7 when it gives none); an import
line its own number, else 1.0; a promoted copy keeps the confidence of the entry it copies.
A restatement raises it (`reinforce`); a supersede leaves the old fact's own value as it was.
"""

from __future__ import annotations

from agent_memory.core.model.models import Source
from agent_memory.core.model.rules import check_confidence

DEFAULTS: dict[Source, float] = {
    Source.MANUAL: 1.0,  # written by hand (or a logged conversation turn)
    Source.TOOL: 1.0,  # a tool's output, as it was
    Source.IMPORT: 1.0,  # unless the imported line carries its own
    Source.REFLECTION: 0.9,  # distilled, not said verbatim
}
SUPPLIED = DEFAULTS[Source.REFLECTION]  # memory_reflect facts/rules the caller supplies
SUMMARY = DEFAULTS[Source.REFLECTION]  # a compaction summary of session turns
SAMPLED = 0.7  # a sampling model's item that names no confidence
REINFORCE_STEP = 0.25  # the share of the remaining doubt one restatement removes


def default_confidence(source: Source) -> float:
    """The confidence an entry of this source gets when the writer names none."""
    return DEFAULTS[source]


def confidence_of(source: Source, given: float | None) -> float:
    """The confidence a write stores: the writer's (0.0-1.0, else `INVALID_PARAMS`; NaN too) or the
    source's default."""
    return check_confidence(default_confidence(source) if given is None else given)


def reinforce(current: float, repeat: float) -> float:
    """Confidence after a fact is stated again: `current + (1 - current) * 0.25`, or the
    restatement's own confidence when that is higher; never above 1 (4 decimals)."""
    raised = current + (1.0 - current) * REINFORCE_STEP
    return round(min(1.0, max(raised, repeat, current)), 4)
