"""What the hook helper does for each host event, through the application's use cases (the door the
MCP tools go through) as the configured identity: recall at SessionStart and UserPromptSubmit,
capture (log, then reflect) at Stop, PreCompact and SessionEnd.

A project's memory lives under the agent's own `<agent_id>/<project>` and the team's
`<team>/<project>` (`agent_memory.projects` says which project a directory is); recall reads those
and the agent's and team's root namespaces, never another project's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory.application import Application
from agent_memory.application.memories import ListRequest, Place
from agent_memory.application.sessions import LogTurns, Reflect
from agent_memory.core.model.commands import Call
from agent_memory.core.model.errors import DomainError
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.model.models import Caller, Domain, Entry, Layer, ListFilters, Scope
from agent_memory.core.model.statements import COMPACTION_TAG, Turn as LoggedTurn
from agent_memory.core.model.text import check_text
from agent_memory.core.recall.context import render_block
from agent_memory.core.recall.retrieval import RetrievalRequest
from agent_memory.hooks.hosts import REFLECT_ROLES, event_of, transcript_format
from agent_memory.hooks.rollout import parse_rollout
from agent_memory.hooks.transcript import Turn, parse_lines, read_new
from agent_memory.projects import Project, host_directory

PARSERS = {"claude": parse_lines, "codex": parse_rollout}  # a host's transcript format (hosts.py) -> its reader
LOG_BATCH = 100  # turns logged a call, as memory_reflect log takes them
MAX_QUERY_CHARS = 4000
START_ENTRY_CHARS = 300
_SESSION = re.compile(r"^[A-Za-z0-9._:-]{1,128}\Z")


@dataclass(frozen=True)
class HookSettings:
    locate: Callable[[str], Project]  # the project a directory belongs to (Settings.project_in)
    budget_chars: int  # UserPromptSubmit
    start_chars: int  # SessionStart
    state_dir: Path  # transcript offsets


def host_session(session_id: object) -> str:
    """The host's session id as a memory session id (hashed when it does not fit the pattern)."""
    text = str(session_id or "")
    if _SESSION.match(text):
        return text
    return "h-" + hashlib.sha256(text.encode()).hexdigest()[:32]


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
    def __init__(self, settings: HookSettings, door: Application, caller: Caller) -> None:
        """`door`: the use cases the hooks work through, as `caller` (the configured identity)."""
        self._s = settings
        self._door = door
        self._caller = caller
        self._offsets = Offsets(settings.state_dir)

    def _call(self, caller: Caller, tool: str) -> Call:
        """A call as the MCP tool `tool` makes it (its audit rows name that tool)."""
        return Call(caller, new_request_id(), tool)

    def _in_project(self, event: dict[str, Any], env: dict[str, str], cwd: str) -> Caller:
        """The configured identity working in the event's project, as the MCP server the host launched
        works in it (the same `Settings.project_in`), so the model's writes and the hooks' meet."""
        found = self._s.locate(host_directory(env, str(event.get("cwd") or cwd)))
        return dataclasses.replace(self._caller, project=found.segment, project_legacy=found.legacy)

    async def handle(self, host: str, name: str, event: dict[str, Any], env: dict[str, str], cwd: str
                     ) -> tuple[str, str]:
        """(context for the host, a note for stderr); either may be empty. What `host`'s event
        `name` does is its role in the host's table (`hosts.py`); an event it does not name does
        nothing."""
        spec = event_of(host, name)
        if spec is None:
            return "", ""
        caller = self._in_project(event, env, cwd)
        session = host_session(event.get("session_id"))
        if spec.role == "prompt":
            return await self._prompt(caller, event, session), ""
        if spec.role == "start":
            return await self._start(caller), ""
        if spec.role == "turn":  # Gemini CLI's transcript is not Claude's JSONL: the turn comes in the event
            turns = [Turn(role, str(event.get(key) or ""), _at(event), None)
                     for role, key in (("user", "prompt"), ("assistant", "prompt_response"))]
            await self._log(caller, session, turns)
            return "", ""
        if transcript_format(host):
            await self._logged(caller, event, session, PARSERS[transcript_format(host)])
        return "", await self._reflect(caller, session) if spec.role in REFLECT_ROLES else ""

    async def _prompt(self, caller: Caller, event: dict[str, Any], session: str) -> str:
        """What memory holds about the prompt (where memory_retrieve searches by default in the
        project: it, and agent- and team-wide memory), but the turns of this very session (they are
        in the host's context already; its compaction summaries are not)."""
        prompt = " ".join(str(event.get("prompt") or "").split())[:MAX_QUERY_CHARS]
        if not prompt:
            return ""
        request = RetrievalRequest(query=prompt, max_chars=self._s.budget_chars, leave_out_session=session)
        try:
            check_text(prompt, "query")  # the text rule, as at every edge (core/model/text.py)
            found = await self._door.recall.retrieve(self._call(caller, "memory_retrieve"), request)
        except DomainError as exc:
            raise HookError(_said(exc)) from None
        return found.context

    async def _start(self, caller: Caller) -> str:
        """The project's rules (its own, then agent- and team-wide ones), its facts and its latest
        summary; a project's older namespace counts as the project."""
        rules, facts = ListFilters(layer=Layer.META), ListFilters(layer=Layer.LONG_TERM)
        summaries = ListFilters(layer=Layer.SESSION, tags=(COMPACTION_TAG,))
        agent, team = caller.agent_id, caller.team
        projects = [p for p in (caller.project, caller.project_legacy) if p]
        wanted = [*((Scope.AGENT, f"{agent}/{p}", rules, 10) for p in projects),
                  *((Scope.TEAM, f"{team}/{p}", rules, 10) for p in projects),
                  (Scope.AGENT, agent, rules, 10), (Scope.TEAM, team, rules, 10),
                  *((Scope.AGENT, f"{agent}/{p}", facts, 10) for p in projects),
                  *((Scope.TEAM, f"{team}/{p}", facts, 5) for p in projects),
                  *((Scope.AGENT, f"{agent}/{p}", summaries, 1) for p in projects)]
        entries: list[Entry] = []
        for scope, namespace, filters, limit in wanted:
            try:
                page = await self._door.memories.list(self._call(caller, "memory_crud"),
                                                      ListRequest(Place(scope, namespace), filters, limit=limit))
            except DomainError:  # e.g. a team the identity cannot read: the rest still helps
                continue
            entries += [e for e in page.items if not e.superseded_by]
        if not entries:
            return ""
        context, _, _ = render_block(entries, self._s.start_chars, START_ENTRY_CHARS)
        return context

    async def _logged(self, caller: Caller, event: dict[str, Any], session: str,
                      parse: Callable[[list[bytes]], list[Turn]]) -> None:
        """The transcript's turns not logged yet (read by `parse`), logged."""
        path = event.get("transcript_path")
        if isinstance(path, str) and path:
            if (why := _not_a_transcript(path)) is not None:
                raise HookError(f"transcript_path {why}: nothing read")
            key = f"{caller.home}\n{session}\n{path}"
            async with self._offsets.lock(key):
                offset = self._offsets.get(key)
                turns, new_offset = await asyncio.to_thread(read_new, path, offset, parse=parse)
                await self._log(caller, session, turns)
                if new_offset != offset:
                    self._offsets.put(key, new_offset)

    async def _reflect(self, caller: Caller, session: str) -> str:
        try:
            await self._door.sessions.reflect(self._call(caller, "memory_reflect"),
                                              Reflect(session, namespace=caller.home))
        except DomainError as exc:
            return _said(exc)
        return ""

    async def _log(self, caller: Caller, session: str, turns: list[Turn]) -> None:
        logged = [LoggedTurn(role=t.role, content=t.content, name=_name(t.name) if t.name else None, at=t.at)
                  for t in turns if t.content.strip()]
        for start in range(0, len(logged), LOG_BATCH):
            request = LogTurns(session, logged[start:start + LOG_BATCH], caller.home, Domain.CODE_CONTEXT)
            try:
                check_text([[t.content, t.name or ""] for t in request.turns], "turns")
                await self._door.sessions.log(self._call(caller, "memory_reflect"), request)
            except DomainError as exc:
                raise HookError(_said(exc)) from None


def _not_a_transcript(path: str) -> str | None:
    """Why `path` is no transcript the hooks may read (None: it is one, or not written yet): a
    regular `.jsonl` file, after links, that the user running the hooks owns. An event naming
    another user's file, a device or a folder gets nothing read."""
    if not path.endswith(".jsonl") or "\0" in path:
        return "is not a .jsonl file"
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None  # the host has not written it yet
    except (OSError, ValueError):
        return "cannot be read"
    if not stat.S_ISREG(found.st_mode):
        return "is not a regular file"
    if found.st_uid != os.getuid():
        return "belongs to another user"
    return None


def _at(event: dict[str, Any]) -> str | None:
    at = event.get("timestamp")
    return at if isinstance(at, str) and 0 < len(at) <= 64 else None


class HookError(Exception):
    """A tool refused the hook's call (the message is the tool's)."""


_NAME = re.compile(r"[^A-Za-z0-9 ._@-]+")


def _name(name: str) -> str:
    return (_NAME.sub("_", name).strip() or "tool")[:64]


def _said(error: DomainError) -> str:
    """What the hook tells its host on stderr: the error's code and message, as a tool answers them."""
    return f"{error.code}: {error.message}"
