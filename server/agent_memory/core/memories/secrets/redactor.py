"""Redaction as configured, for the write paths: a text, several, an entry; large inputs are
redacted in a worker thread, so that the event loop goes on serving other callers meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent_memory.core.memories.secrets.scan import redact
from agent_memory.core.model.models import Entry

OFF_LOOP_CHARS = 65_536  # above this many characters at once, redaction runs in a worker thread


@dataclass(frozen=True, slots=True)
class Redactor:
    """Redaction as configured (`redact_secrets`); switched off, text passes unchanged."""

    enabled: bool = True

    def text(self, text: str, limit: int | None = None) -> tuple[str, int]:
        """`text` redacted; a text within `limit` stays within it (a marker longer than its secret is cut)."""
        if not self.enabled:
            return text, 0
        clean, found = redact(text)
        if limit is not None and len(clean) > limit >= len(text):
            clean = clean[:limit]
        return clean, found

    def texts(self, texts: tuple[str, ...], limit: int | None = None) -> tuple[tuple[str, ...], int]:
        done = [self.text(t, limit) for t in texts]
        return tuple(t for t, _ in done), sum(n for _, n in done)

    def entry(self, entry: Entry, limit: int | None = None, tag_limit: int = 128) -> tuple[Entry, int]:
        """`entry` with its content and tags redacted (a tag holds metadata values too: `key=value`)."""
        content, in_content = self.text(entry.content, limit)
        tags, in_tags = self.texts(entry.tags, tag_limit)
        if not in_content + in_tags:
            return entry, 0
        return replace(entry, content=content, tags=tuple(dict.fromkeys(tags))), in_content + in_tags

    # The same, awaited: off the event loop when the input is large.

    async def aeach(self, texts: Sequence[str], limit: int | None = None) -> list[tuple[str, int]]:
        """Each of `texts` redacted, with its count."""
        if not self.enabled:
            return [(t, 0) for t in texts]
        if sum(map(len, texts)) <= OFF_LOOP_CHARS:
            return [self.text(t, limit) for t in texts]
        return await asyncio.to_thread(lambda: [self.text(t, limit) for t in texts])

    async def atext(self, text: str, limit: int | None = None) -> tuple[str, int]:
        return (await self.aeach((text,), limit))[0]

    async def aentry(self, entry: Entry, limit: int | None = None, tag_limit: int = 128) -> tuple[Entry, int]:
        if not self.enabled or len(entry.content) + sum(map(len, entry.tags)) <= OFF_LOOP_CHARS:
            return self.entry(entry, limit, tag_limit)
        return await asyncio.to_thread(self.entry, entry, limit, tag_limit)

    async def aentries(self, entries: Sequence[Entry], limit: int | None = None,
                       tag_limit: int = 128) -> list[tuple[Entry, int]]:
        if not self.enabled or sum(len(e.content) + sum(map(len, e.tags)) for e in entries) <= OFF_LOOP_CHARS:
            return [self.entry(e, limit, tag_limit) for e in entries]
        return await asyncio.to_thread(lambda: [self.entry(e, limit, tag_limit) for e in entries])
