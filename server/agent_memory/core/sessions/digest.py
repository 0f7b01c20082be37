"""A session's digest: what its turns said, kept in long-term memory when the turns themselves go.

Unlike a compaction summary (as short as the average turn it stands for, because the turns are
still there), a digest is all that remains of a session once its turns are pruned, so it keeps
every sentence that carries something, as it was written: names, numbers, hosts, dates, versions
and paths stay word for word. What it leaves out is what nobody would search for: greetings,
thanks, acknowledgements ("Noted.", "Sure, I can help with that."), sentences of under three words
that hold no detail, and of a tool's output all but its first line (the command, the file or the
error it names). One entry per chunk of turns (a time gap starts a new chunk, as in compaction),
each at most `max_chars`: `Turns 3-9 (2026-01-02):` (the entry's `session_id` names the session)
then one `speaker: text` line per turn that said something.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent_memory.core.model.statements import Turn
from agent_memory.core.sessions.extract import sentences
from agent_memory.core.sessions.noise import says_something
from agent_memory.core.sessions.summary import chunk, header

TOOL_LINE = 200  # a tool turn keeps its first line, this long at most
_SPEAKER = re.compile(r"^[A-Z][\w .'-]{0,39}: ")


def turn_line(turn: Turn) -> str | None:
    """What of one turn goes into the digest, `speaker: text`, or None when it said nothing worth it
    (a turn whose text starts with its speaker's name, `Caroline: ...`, keeps only that label)."""
    content = turn.content.strip()
    named = _SPEAKER.match(content)
    label = named.group(0) if named else f"{turn.name or turn.role}: "
    body = content[named.end():] if named else content
    if not body.strip():
        return None
    if turn.role == "tool":
        return label + body.strip().splitlines()[0][:TOOL_LINE]
    kept = [s for s in sentences(body) if says_something(s)]
    return label + " ".join(kept) if kept else None


def digest(numbered: Sequence[tuple[int, Turn]], max_chars: int, max_turns: int,
           gap_seconds: float) -> list[tuple[list[int], str]]:
    """The digest of `(ordinal, turn)` pairs in session order: `(ordinals covered, text)` per entry,
    each text at most `max_chars` (a single line longer than that is cut). Turns that said nothing
    worth keeping are covered but have no line; a chunk with no line at all gives no entry."""
    out: list[tuple[list[int], str]] = []
    for part in chunk([(n, turn, None) for n, turn in numbered], max_turns, gap_seconds):
        ordinals = [n for n, _, _ in part]
        turns = [turn for _, turn, _ in part]
        lines = [(n, line, turn) for n, turn in zip(ordinals, turns, strict=True) if (line := turn_line(turn))]
        if not lines:
            continue
        out += _pack(lines, max_chars)
    return out


def _pack(lines: list[tuple[int, str, Turn]], max_chars: int) -> list[tuple[list[int], str]]:
    """Lines into entries of at most `max_chars`, each with its own header, in order."""
    out: list[tuple[list[int], str]] = []
    group: list[tuple[int, str, Turn]] = []

    def text(items: list[tuple[int, str, Turn]]) -> str:
        first = header([n for n, _, _ in items], [t for _, _, t in items])
        return "\n".join([first, *(line for _, line, _ in items)])

    for item in lines:
        if group and len(text([*group, item])) > max_chars:
            out.append(([n for n, _, _ in group], text(group)[:max_chars]))
            group = []
        group.append(item)
    if group:
        out.append(([n for n, _, _ in group], text(group)[:max_chars]))
    return out
