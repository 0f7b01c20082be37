"""The context budget split across memory tiers (issue 25.1, after the three-tier design's 40/40/20).

The design's tiers are our scopes: the task's memory is the agent's own (`agent`), the project's
is the team's (`team`), global is `global`. Each tier is given its share of the budget; a tier
that needs less than its share leaves the rest to the others in proportion to their shares
(`split`), and whatever is still left (a line too long for what remains of its tier's share, a
tier with share 0) is filled, best-first within a tier, by the tier furthest below its share
(`allocate`). The block keeps the ranked
order (agent > team > global among equals): the split decides which memories fit, not where."""

from __future__ import annotations

import math
from collections.abc import Mapping

from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.models import Scope
from agent_memory.core.recall.context import ContextLine, frame, frame_cost, render_line, standing

TIERS = (Scope.AGENT, Scope.TEAM, Scope.GLOBAL)
FIELD = "budget_shares"
Shares = dict[Scope, float]


def budget_shares(values: Mapping[str, object]) -> Shares:
    """Normalised shares (summing to 1) from `{"agent": a, "team": t, "global": g}`; a tier not
    named has share 0. Raises InvalidParams (field budget_shares): an unknown tier, a share that
    is not a finite number >= 0, or shares summing to 0."""
    try:
        return _normalised(values)
    except ValueError as exc:
        raise InvalidParams(f"budget_shares {exc}", field=FIELD) from None


def _normalised(values: Mapping[str, object]) -> Shares:
    unknown = sorted(set(values) - {t.value for t in TIERS})
    if unknown:
        raise ValueError(f"names tiers agent, team and global only (not {', '.join(map(str, unknown))})")
    raw: Shares = {}
    for tier in TIERS:
        value = values.get(tier.value, 0.0)
        share = math.nan if isinstance(value, bool) else _number(value)
        if not (math.isfinite(share) and share >= 0):
            raise ValueError(f"must be numbers >= 0 ({tier.value} is not)")
        raw[tier] = share
    total = sum(raw.values())
    if total <= 0:
        raise ValueError("must not all be 0 (e.g. agent=0.4, team=0.4, global=0.2)")
    return {tier: share / total for tier, share in raw.items()}


def _number(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def shares_text(value: object) -> str:
    """The setting's parser: `agent=0.4,team=0.4,global=0.2` (or a TOML table of the three),
    returned in that form. Raises ValueError."""
    if isinstance(value, Mapping):
        pairs = dict(value)
    else:
        pairs = {}
        for part in filter(None, (p.strip() for p in str(value).split(","))):
            name, sep, number = part.partition("=")
            if not sep:
                raise ValueError("must be tier=share pairs, e.g. agent=0.4,team=0.4,global=0.2")
            pairs[name.strip()] = number.strip()
    _normalised(pairs)
    return ",".join(f"{t.value}={_number(pairs.get(t.value, 0)):g}" for t in TIERS)


def shares_of(text: str) -> Shares:
    """The shares a valid setting (`shares_text`) names, normalised."""
    return _normalised(dict(part.split("=", 1) for part in text.split(",")))


def split(demand: Mapping[Scope, int], shares: Shares, room: int) -> dict[Scope, int]:
    """Each tier's allowance of `room` characters: its share, except that a tier needing less
    (`demand`) gets what it needs and the rest goes to the others in proportion to their shares
    (repeated until no tier needs less than it is given)."""
    allowance = {tier: 0.0 for tier in TIERS}
    open_tiers = [t for t in TIERS if demand.get(t, 0) > 0 and shares.get(t, 0.0) > 0]
    left = float(max(room, 0))
    while open_tiers and left > 0:
        weight = sum(shares[t] for t in open_tiers)
        sated = [t for t in open_tiers if demand[t] <= left * shares[t] / weight]
        if not sated:
            for tier in open_tiers:
                allowance[tier] = left * shares[tier] / weight
            break
        for tier in sated:
            allowance[tier] = float(demand[tier])
            left -= demand[tier]
            open_tiers.remove(tier)
    return {tier: int(value + 1e-6) for tier, value in allowance.items()}  # 1e-6: float sums, not 599 for 600


def allocate(lines: list[ContextLine], budget: int, shares: Shares) -> tuple[str, list[ContextLine], int]:
    """`context.assemble` with the budget split by tier: (context, lines used, number dropped).
    Each tier's lines go in best-first within its allowance (`split`); then what is left of the
    whole budget goes one line at a time to the tier furthest below its allowance (its best line
    that still fits), until no line fits. The lines keep their order."""
    rendered = [render_line(line) for line in lines]
    cost = [len(text) + 1 for text in rendered]
    room = budget - frame_cost(any(standing(line.entry) for line in lines), True)
    demand = {tier: 0 for tier in TIERS}
    for line, size in zip(lines, cost, strict=True):
        demand[line.entry.scope] += size
    allowance = split(demand, shares, room)
    spent = {tier: 0 for tier in TIERS}
    chosen: set[int] = set()
    for i, line in enumerate(lines):
        tier = line.entry.scope
        if spent[tier] + cost[i] <= allowance[tier]:
            chosen.add(i)
            spent[tier] += cost[i]
    left = room - sum(spent.values())
    waiting = [i for i in range(len(lines)) if i not in chosen]
    while True:  # what is left: to the tier furthest below its allowance, its best line that fits
        fitting: dict[Scope, int] = {}
        for i in waiting:
            if cost[i] <= left:
                fitting.setdefault(lines[i].entry.scope, i)
        if not fitting:
            break
        i = fitting[max(fitting, key=lambda tier: allowance[tier] - spent[tier])]
        chosen.add(i)
        waiting.remove(i)
        spent[lines[i].entry.scope] += cost[i]
        left -= cost[i]
    kept = sorted(chosen)
    used = [lines[i] for i in kept]
    return frame([rendered[i] for i in kept], used), used, len(lines) - len(kept)
