"""What a project needs when a session starts: its rules (its own, then agent- and team-wide ones),
the session summary it saw last, and its most useful facts, within the block's budget.

Facts are ordered by how much they are worth now: a fact confirmed again (reflection reinforced
it: confidence up, `updated_at` new) or changed recently comes before one said once long ago
(its confidence, halved every `HALF_LIFE_DAYS` since its last update). A session's digest is
a summary, not a fact: the latest summary is the newest of the session digests (long-term) and
the compaction summaries (session layer). A project's older namespace counts as the project.
"""

from __future__ import annotations

from datetime import datetime

from agent_memory.core.model.clock import parse_ts
from agent_memory.core.model.models import Caller, Domain, Entry, Layer, ListFilters, Scope
from agent_memory.core.model.statements import COMPACTION_TAG
from agent_memory.core.recall.context import render_block
from agent_memory.hooks.doors import Door, Refused

ENTRY_CHARS = 300  # one entry of the block at most
HALF_LIFE_DAYS = 30.0
FACTS_READ = 40  # the project's newest facts read, the most useful of them shown
_RULES, _FACTS = ListFilters(layer=Layer.META), ListFilters(layer=Layer.LONG_TERM)
_SUMMARIES = (ListFilters(layer=Layer.SESSION, tags=(COMPACTION_TAG,)),
              ListFilters(layer=Layer.LONG_TERM, domain=Domain.SESSION_SUMMARY))


def worth(entry: Entry, now: datetime) -> float:
    """A fact's worth at session start: its confidence, halved every HALF_LIFE_DAYS since it was
    last confirmed or changed."""
    try:
        days = max(0.0, (now - parse_ts(entry.updated_at)).total_seconds() / 86_400)
    except ValueError:
        days = 0.0
    return entry.confidence * 0.5 ** (days / HALF_LIFE_DAYS)


async def start_block(door: Door, caller: Caller, budget: int, now: datetime) -> str:
    agent, team = caller.agent_id, caller.team
    projects = [p for p in (caller.project, caller.project_legacy) if p]

    async def read(scope: Scope, namespace: str, filters: ListFilters, limit: int) -> list[Entry]:
        try:
            found = await door.listed(caller, scope, namespace, filters, limit)
        except Refused:  # e.g. a team the identity cannot read: the rest still helps
            return []
        return [e for e in found if not e.superseded_by]

    rules: list[Entry] = []
    for scope, namespace in [*((Scope.AGENT, f"{agent}/{p}") for p in projects),
                             *((Scope.TEAM, f"{team}/{p}") for p in projects),
                             (Scope.AGENT, agent), (Scope.TEAM, team)]:
        rules += await read(scope, namespace, _RULES, 10)
    facts: list[Entry] = []
    summaries: list[Entry] = []
    for p in projects:
        for scope, namespace, limit in ((Scope.AGENT, f"{agent}/{p}", FACTS_READ), (Scope.TEAM, f"{team}/{p}", 10)):
            facts += [e for e in await read(scope, namespace, _FACTS, limit) if e.domain is not Domain.SESSION_SUMMARY]
        for filters in _SUMMARIES:
            summaries += await read(Scope.AGENT, f"{agent}/{p}", filters, 1)
    latest = sorted(summaries, key=lambda e: e.created_at, reverse=True)[:1]
    ranked = sorted(facts, key=lambda e: worth(e, now), reverse=True)
    entries = [*rules, *latest, *ranked]
    if not entries:
        return ""
    context, _, _ = render_block(entries, budget, ENTRY_CHARS)
    return context
