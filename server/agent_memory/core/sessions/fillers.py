"""Statements without the words around them: reminders, pleas to remember and names said to the
listener ("Reminder: ...", "... please remember that", "Claude, I prefer ..."), so a fact said
again is stored, and compared, as the fact itself."""

from __future__ import annotations

import re

_FILLER_LEAD = re.compile(
    r"^(?:(?:(?:just\s+)?(?:a\s+)?(?:friendly\s+)?reminder|fyi|note|n\.?b\.?|remember|heads up|psst|"
    r"update|correction|for the record)\s*[:,\-–—]\s*|"
    r"(?:just\s+so\s+you\s+know|for\s+your\s+information|as\s+(?:i|we)\s+(?:said|mentioned)(?:\s+before)?|"
    r"(?:please\s+)?(?:remember|note|keep\s+in\s+mind|don'?t\s+forget)\s+that|"
    r"(?:i\s+)?(?:just\s+)?want(?:ed)?\s+(?:you\s+)?to\s+(?:know|remember)\s+that|"
    r"to\s+remind\s+you|reminding\s+you(?:\s+that)?|once\s+again|again)\s*[:,\-–—]?\s+)+",
    re.IGNORECASE)
_FILLER_TAIL = re.compile(
    r"(?:[\s,;:\-–—]+(?:(?:so\s+)?please\s+)?(?:remember|note|keep\s+in\s+mind|don'?t\s+forget|"
    r"make\s+a\s+note\s+of|take\s+note\s+of)(?:\s+(?:that|this|it))?(?:\s*,?\s*please)?|"
    r"[\s,;:\-–—]+(?:just\s+so\s+you\s+know|fyi|for\s+the\s+record|as\s+a\s+reminder|thanks|thank\s+you|"
    r"please|ok(?:ay)?\?*|again))+\s*([.!]*)\s*$",
    re.IGNORECASE)
# "Claude, I prefer ..." / "Hey Sam, please ...": a name said to the listener, before the statement.
_VOCATIVE_LEAD = re.compile(r"^(?:(?:hey|hi|hello|ok(?:ay)?|so|and)\s+)?[A-Z][a-zA-Z]{1,20},\s+"
                            r"(?=(?:I|I'm|I've|I'd|we|my|our|please|always|never|don'?t|the|from)\b)")
_VOCATIVE_TAIL = re.compile(r",\s+(?:my\s+friend|buddy|mate|[A-Z][a-zA-Z]{1,20})\s*([.!]*)\s*$")


def clean_statement(text: str) -> str:
    """Without reminders, pleas to remember and names said to the listener; first letter capital,
    closing full stop kept. Never returns less than the statement itself."""
    out = text.strip()
    for _ in range(3):  # fillers can stack: "Reminder: just so you know, ..."
        before = out
        out = _VOCATIVE_LEAD.sub("", _FILLER_LEAD.sub("", out)).strip()
        out = _FILLER_TAIL.sub(lambda m: m.group(1) or "", out).strip()
        out = _VOCATIVE_TAIL.sub(lambda m: m.group(1) or "", out).strip()
        if out == before:
            break
    if len(out.split()) < 2:
        return text.strip()  # the "filler" was the statement
    out = out.rstrip(" ,;:-–—")
    if out[-1:] not in ".!?":
        out += "."
    return out[:1].upper() + out[1:]
