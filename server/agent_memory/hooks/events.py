"""What the hook helper does for each host event, through the three MCP tools as the configured
identity: recall at SessionStart and UserPromptSubmit, capture (log, then reflect) at Stop,
PreCompact and SessionEnd.

A project's memory lives under the agent's own `<agent_id>/<project>` and the team's
`<team>/<project>`; recall reads those and the agent's and team's root namespaces, never another
project's.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory.core.context import render_block
from agent_memory.core.models import Entry, Layer, Priority, Scope, Source
from agent_memory.hooks.transcript import Turn, read_new

Tools = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, dict[str, Any]]]]

RECALL_EVENTS = {"SessionStart", "UserPromptSubmit"}
CAPTURE_EVENTS = {"Stop", "PreCompact", "SessionEnd", "SubagentStop"}
REFLECT_EVENTS = {"PreCompact", "SessionEnd"}
LOG_BATCH = 100  # memory_reflect log takes at most 100 turns a call
MAX_QUERY_CHARS = 4000
START_ENTRY_CHARS = 300
_SEGMENT = re.compile(r"[^A-Za-z0-9._-]+")
_SESSION = re.compile(r"^[A-Za-z0-9._:-]{1,128}\Z")


@dataclass(frozen=True)
class HookSettings:
    agent_id: str
    team: str
    project: str  # empty: the git root's name
    budget_chars: int  # UserPromptSubmit
    start_chars: int  # SessionStart
    state_dir: Path  # transcript offsets


def project_name(directory: str, configured: str = "") -> str:
    """The namespace segment of a project: the configured name, else the name of the git root
    above `directory` (else of `directory` itself), as letters, digits and `._-`."""
    name = configured
    if not name:
        path = Path(directory or ".").resolve()
        root = next((p for p in (path, *path.parents) if (p / ".git").exists()), path)
        name = root.name
    name = _SEGMENT.sub("-", name).strip("-.")[:64]
    return name or "project"


def host_session(session_id: object) -> str:
    """The host's session id as a memory session id (hashed when it does not fit the pattern)."""
    text = str(session_id or "")
    if _SESSION.match(text):
        return text
    return "h-" + hashlib.sha256(text.encode()).hexdigest()[:32]


def _entry(record: dict[str, Any]) -> Entry:
    return Entry(
        id=record["id"], scope=Scope(record["scope"]), namespace=record["namespace"], team=record.get("team"),
        owner_agent_id=record["owner_agent_id"], content=record["content"], tags=tuple(record.get("tags") or ()),
        priority=Priority(record.get("priority", "medium")), source=Source(record.get("source", "manual")),
        confidence=float(record.get("confidence", 1.0)), layer=Layer(record["layer"]),
        created_at=record["created_at"], updated_at=record.get("updated_at") or record["created_at"],
        expires_at=record.get("expires_at"), version=int(record.get("version", 1)), etag=record.get("etag", ""),
        session_id=record.get("session_id"),
    )


class Offsets:
    """How far each session's transcript has been read, in a small file per session that
    survives restarts; one lock per session orders concurrent capture events."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    def _file(self, key: str) -> Path:
        return self._dir / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"

    def get(self, key: str) -> int:
        try:
            data = json.loads(self._file(key).read_text())
            return int(data["offset"]) if data.get("key") == key else 0
        except (OSError, ValueError, KeyError, TypeError):
            return 0

    def put(self, key: str, offset: int) -> None:
        self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        target = self._file(key)
        part = target.with_suffix(f".{os.getpid()}.part")
        part.write_text(json.dumps({"key": key, "offset": offset}))
        os.replace(part, target)


class HookEvents:
    def __init__(self, settings: HookSettings, tools: Tools) -> None:
        self._s = settings
        self._tools = tools
        self._offsets = Offsets(settings.state_dir)

    def _namespaces(self, event: dict[str, Any], env: dict[str, str], cwd: str) -> tuple[str, str]:
        directory = str(env.get("CLAUDE_PROJECT_DIR") or env.get("GEMINI_PROJECT_DIR") or event.get("cwd") or cwd)
        project = project_name(directory, self._s.project)
        return f"{self._s.agent_id}/{project}", f"{self._s.team}/{project}"

    async def handle(self, name: str, event: dict[str, Any], env: dict[str, str], cwd: str) -> tuple[str, str]:
        """(context for the host, a note for stderr); either may be empty. `name` is Claude Code's
        event name or Gemini CLI's (BeforeAgent: a prompt; AfterAgent: a prompt and its response;
        PreCompress)."""
        mine, ours = self._namespaces(event, env, cwd)
        if name in ("UserPromptSubmit", "BeforeAgent"):
            return await self._prompt(event, mine, ours), ""
        if name == "SessionStart":
            return await self._start(mine, ours), ""
        if name == "AfterAgent":  # Gemini CLI's transcript is not Claude's JSONL: the turn comes in the event
            turns = [Turn(role, str(event.get(key) or ""), _at(event), None)
                     for role, key in (("user", "prompt"), ("assistant", "prompt_response"))]
            await self._log(host_session(event.get("session_id")), mine, turns)
            return "", ""
        if name == "PreCompress" or (name == "SessionEnd" and not event.get("transcript_path")):
            return "", await self._reflect(host_session(event.get("session_id")), mine)
        if name in CAPTURE_EVENTS:
            return "", await self._capture(name, event, mine)
        return "", ""

    async def _prompt(self, event: dict[str, Any], mine: str, ours: str) -> str:
        prompt = " ".join(str(event.get("prompt") or "").split())[:MAX_QUERY_CHARS]
        if not prompt:
            return ""
        failed, data = await self._tools("memory_retrieve", {
            "query": prompt, "namespaces": [mine, self._s.agent_id, ours, self._s.team],
            "max_chars": self._s.budget_chars})
        if failed:
            raise HookError(_first_error(data))
        return str(data.get("context") or "")

    async def _start(self, mine: str, ours: str) -> str:
        wanted = (("agent", mine, {"layer": "meta"}, 10), ("team", ours, {"layer": "meta"}, 10),
                  ("agent", mine, {"layer": "long_term"}, 10), ("team", ours, {"layer": "long_term"}, 5),
                  ("agent", mine, {"layer": "session", "tags": ["compaction"]}, 1))
        entries: list[Entry] = []
        for scope, namespace, filters, limit in wanted:
            failed, data = await self._tools("memory_crud", {"action": "list", "scope": scope, "namespace": namespace,
                                                             "filters": filters, "limit": limit})
            if failed:  # e.g. a team the identity cannot read: the rest still helps
                continue
            entries += [_entry(r) for r in data.get("items", []) if not r.get("superseded_by")]
        if not entries:
            return ""
        context, _, _ = render_block(entries, self._s.start_chars, START_ENTRY_CHARS)
        return context

    async def _capture(self, name: str, event: dict[str, Any], namespace: str) -> str:
        path = event.get("transcript_path")
        session = host_session(event.get("session_id"))
        notes: list[str] = []
        if isinstance(path, str) and path:
            key = f"{namespace}\n{session}\n{path}"
            async with self._offsets.lock(key):
                offset = self._offsets.get(key)
                turns, new_offset = await asyncio.to_thread(read_new, path, offset)
                await self._log(session, namespace, turns)
                if new_offset != offset:
                    self._offsets.put(key, new_offset)
        if name in REFLECT_EVENTS:
            notes.append(await self._reflect(session, namespace))
        return "; ".join(n for n in notes if n)

    async def _reflect(self, session: str, namespace: str) -> str:
        failed, data = await self._tools("memory_reflect", {"action": "reflect", "session_id": session,
                                                            "namespace": namespace, "use_sampling": False})
        return _first_error(data) if failed else ""

    async def _log(self, session: str, namespace: str, turns: list[Turn]) -> None:
        wire = [{"role": t.role, "content": t.content, **({"name": _name(t.name)} if t.name else {}),
                 **({"at": t.at} if t.at else {})} for t in turns if t.content.strip()]
        for start in range(0, len(wire), LOG_BATCH):
            failed, data = await self._tools("memory_reflect", {"action": "log", "session_id": session,
                                                                "namespace": namespace, "domain": "code_context",
                                                                "turns": wire[start:start + LOG_BATCH]})
            if failed:
                raise HookError(_first_error(data))


def _at(event: dict[str, Any]) -> str | None:
    at = event.get("timestamp")
    return at if isinstance(at, str) and 0 < len(at) <= 64 else None


class HookError(Exception):
    """A tool refused the hook's call (the message is the tool's)."""


_NAME = re.compile(r"[^A-Za-z0-9 ._@-]+")


def _name(name: str) -> str:
    return (_NAME.sub("_", name).strip() or "tool")[:64]


def _first_error(data: dict[str, Any]) -> str:
    errors = data.get("errors") or [{}]
    first = errors[0] if isinstance(errors[0], dict) else {}
    return f"{first.get('code', 'ERROR')}: {first.get('message', 'the tool refused the call')}"
