"""What is noise in a session: acknowledgements and filler ("Noted.", "Thanks!", "ok", "Sure, I can
help with that."), and of a tool's output anything but an error. Automatic capture (the host hooks)
does not log noise at all, and a session's digest leaves it out (`digest`): nobody searches for it,
and kept for a month it only crowds what was said.

A sentence says something when it has three words or more and is not filler, or when it holds a
detail (a number, a path, a host, a version, an identifier) whatever its words. A tool turn is kept when it
names what was run or opened (`called <tool>: <command or file>`) or an error (`result: error
...`); a tool's ordinary output (`result: ...`) is not.
"""

from __future__ import annotations

import re

from agent_memory.core.sessions.extract import sentences

_DETAIL = re.compile(r"\d|[/\\._:@#]\w")  # a number, a path, a host, a version, an identifier
_FILLER = re.compile(
    r"^(?:(?:noted|got it|sure|of course|certainly|understood|will do|sounds good|great question|happy to help|"
    r"no problem|you'?re welcome|glad (?:i could|to) help|done|perfect|great|awesome|cool|nice|ok(?:ay)?|"
    r"thanks|thank you|thx|cheers|yes|yep|right)(?:[\s,!.]+|$))*"
    r"(?:i can help(?: you)? with that|let me (?:take a look|check|look)(?: at (?:it|that|this))?|to me|so much|"
    r"for that|a lot)?[\s,!.]*$", re.IGNORECASE)


def says_something(sentence: str) -> bool:
    """Not small talk or an assistant's filler, unless it holds a detail."""
    text = sentence.strip()
    if _DETAIL.search(text):
        return True
    return len(text.split()) >= 3 and not _FILLER.match(text)


def is_noise(role: str, content: str) -> bool:
    """A turn automatic capture leaves out: a tool's ordinary output, or a user or assistant turn
    none of whose sentences says something."""
    text = content.strip()
    if role == "tool":
        return text.startswith("result:") and not text.startswith("result: error")
    return not any(says_something(s) for s in sentences(text))
