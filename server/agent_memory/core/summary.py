"""The compaction summary: one entry that stands in (for retrieval) for many older turns.

Deterministic and extractive: a header (how many turns, by whom, when), the facts and rules the
turns state, the topics they keep returning to, then the gist of each substantive turn in order,
as far as the budget allows. Lines are never cut mid-way except the last gist line.
"""

from __future__ import annotations

from collections import Counter

from agent_memory.core.extract import Turn, extract, is_smalltalk, sentences
from agent_memory.core.query_terms import keyword_terms

GIST_CHARS = 160
TOPICS = 12


def _gist(turn: Turn) -> str | None:
    if turn.role == "tool":
        first = turn.content.strip().splitlines()[0] if turn.content.strip() else ""
        return f"tool{f' {turn.name}' if turn.name else ''}: {first[:80]}" if first else None
    parts = [s for s in sentences(turn.content) if not is_smalltalk(s)]
    if not parts:
        return None
    text = parts[0]
    if len(text) > GIST_CHARS:
        text = text[: GIST_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return f"{turn.name or turn.role}: {text}"


def summarise(session_id: str, turns: list[Turn], max_chars: int) -> str:
    roles = Counter(turn.role for turn in turns)
    stamps = [turn.at for turn in turns if turn.at]
    span = f" from {min(stamps)} to {max(stamps)}" if stamps else ""
    who = ", ".join(f"{count} {role}" for role, count in sorted(roles.items()))
    lines = [f"Summary of {len(turns)} earlier turns of session {session_id} ({who}){span}."]
    insights = extract(turns, max_items=12)
    if insights:
        lines.append("Facts and rules stated:")
        lines += [f"- {insight.content}" for insight in insights]
    counts: Counter[str] = Counter()
    for turn in turns:
        if turn.role != "tool":
            counts.update(keyword_terms(turn.content))
    topics = [term for term, n in counts.most_common(TOPICS) if n > 1]
    if topics:
        lines.append("Topics: " + ", ".join(topics) + ".")
    gists = [g for g in map(_gist, turns) if g]
    if gists:
        lines.append("Turns:")
        lines += [f"- {g}" for g in gists]
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > max_chars:
            room = max_chars - used - 2
            if room > 40:
                out.append(line[:room].rsplit(" ", 1)[0] + "…")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)
