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
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory.application.sessions import LogTurns, Reflect
from agent_memory.core.model.clock import utc_now
from agent_memory.core.model.errors import DomainError
from agent_memory.core.model.models import Caller, Domain
from agent_memory.core.model.statements import Turn as LoggedTurn
from agent_memory.core.model.text import check_text
from agent_memory.core.recall.retrieval import RetrievalRequest
from agent_memory.core.sessions.noise import is_noise
from agent_memory.hooks.doors import Door, Refused, Unreachable
from agent_memory.hooks.hosts import REFLECT_ROLES, event_of, transcript_format
from agent_memory.hooks.later import Later
from agent_memory.hooks.rollout import parse_rollout
from agent_memory.hooks.session_start import start_block
from agent_memory.hooks.state import Offsets, Pending
from agent_memory.hooks.transcript import Turn, parse_lines, read_new
from agent_memory.projects import Project, host_directory

PARSERS = {"claude": parse_lines, "codex": parse_rollout}  # a host's transcript format (hosts.py) -> its reader
LOG_BATCH = 100  # turns logged a call, as memory_reflect log takes them
READ_BYTES = 4_000_000  # transcript bytes read at once (fewer when they hold more than LOG_BATCH turns)
MIN_READ_BYTES = 4096
MAX_QUERY_CHARS = 4000
_SESSION = re.compile(r"^[A-Za-z0-9._:-]{1,128}\Z")


@dataclass(frozen=True)
class HookSettings:
    locate: Callable[[str], Project]  # the project a directory belongs to (Settings.project_in)
    budget_chars: int  # UserPromptSubmit
    min_score: float  # UserPromptSubmit's relevance floor (hook_min_score)
    start_chars: int  # SessionStart
    state_dir: Path  # transcript offsets


def host_session(session_id: object) -> str:
    """The host's session id as a memory session id (hashed when it does not fit the pattern)."""
    text = str(session_id or "")
    if _SESSION.match(text):
        return text
    return "h-" + hashlib.sha256(text.encode()).hexdigest()[:32]


class HookEvents:
    def __init__(self, settings: HookSettings, door: Door) -> None:
        """`door`: where the work goes (the embedded store, or a team's server), as `door.caller`."""
        self._s = settings
        self._door = door
        self.later = Later()  # a reflection that outlasts its hook (the helper attaches its task group)
        self._offsets = Offsets(settings.state_dir)
        self._pending = Pending(settings.state_dir / "pending")
        self._delivering = asyncio.Lock()

    def _in_project(self, event: dict[str, Any], env: dict[str, str], cwd: str) -> Caller:
        """The configured identity working in the event's project, as the MCP server the host launched
        works in it (the same `Settings.project_in`), so the model's writes and the hooks' meet."""
        found = self._s.locate(host_directory(env, str(event.get("cwd") or cwd)))
        return dataclasses.replace(self._door.caller, project=found.segment, project_legacy=found.legacy)

    async def handle(self, host: str, name: str, event: dict[str, Any], env: dict[str, str], cwd: str,
                     deadline: float | None = None) -> tuple[str, str]:
        """(context for the host, a note for stderr); either may be empty. What `host`'s event
        `name` does is its role in the host's table (`hosts.py`); an event it does not name does
        nothing. Capture the server could not take is kept and delivered later (`deliver`). A
        reflection still running near `deadline` (the hook's, epoch seconds) goes on after the answer."""
        spec = event_of(host, name)
        if spec is None:
            return "", ""
        caller = self._in_project(event, env, cwd)
        session = host_session(event.get("session_id"))
        try:
            if spec.role == "prompt":
                return await self._prompt(caller, event, session), ""
            if spec.role == "start":
                return await self._start(caller), ""
        except Unreachable as exc:
            raise HookError(f"{exc}: nothing recalled") from None
        work = {"home": caller.home, "project": caller.project, "legacy": caller.project_legacy, "session": session,
                "reflect": spec.role in REFLECT_ROLES}
        if spec.role == "turn":  # Gemini CLI's transcript is not Claude's JSONL: the turn comes in the event
            work["turns"] = [[role, str(event.get(key) or ""), _at(event)]
                             for role, key in (("user", "prompt"), ("assistant", "prompt_response"))]
        elif transcript_format(host) and isinstance(event.get("transcript_path"), str) and event["transcript_path"]:
            if (why := _not_a_transcript(event["transcript_path"])) is not None:
                raise HookError(f"transcript_path {why}: nothing read")
            work["path"], work["format"] = event["transcript_path"], transcript_format(host)
        try:
            await self.deliver()  # what was kept goes first: a session's turns stay in order
            note = await self._capture(work, deadline)
        except Unreachable as exc:
            self._pending.keep(work)
            return "", f"{exc}: the session's turns are kept and sent once it answers"
        return "", note

    @property
    def pending(self) -> bool:
        return self._pending.any()

    async def deliver(self) -> int:
        """Capture kept while the team's server did not answer, sent now, oldest first. Returns how
        many were sent. Raises Unreachable (at the first that still cannot be sent)."""
        sent = 0
        async with self._delivering:
            for path, work in self._pending.oldest_first():
                try:
                    await self._capture(work)
                except HookError:
                    pass  # refused for good (e.g. the token was revoked): keeping it would retry forever
                self._pending.done(path)
                sent += 1
        return sent

    async def _capture(self, work: dict[str, Any], deadline: float | None = None) -> str:
        """Log what `work` names (its turns, or the transcript's new lines), then reflect if asked;
        returns a note for stderr (a refused reflection). Raises Unreachable with nothing lost: the
        transcript's offset moves only past what was logged."""
        caller = dataclasses.replace(self._door.caller, project=str(work.get("project") or ""),
                                     project_legacy=str(work.get("legacy") or ""))
        session = str(work["session"])
        if "turns" in work:
            await self._log(caller, session, [Turn(str(r), str(c), a if isinstance(a, str) else None, None)
                                              for r, c, a in work["turns"]])
        elif "path" in work:
            await self._logged(caller, str(work["path"]), session, PARSERS.get(str(work.get("format")), parse_lines))
        return await self._reflect(caller, work, deadline) if work.get("reflect") else ""

    def _namespaces(self, caller: Caller) -> tuple[str, ...]:
        """Where a prompt's recall looks: the project's own agent and team namespaces (and its older
        ones), then agent- and team-wide memory; never another project's."""
        projects = [p for p in (caller.project, caller.project_legacy) if p]
        return (*(f"{caller.agent_id}/{p}" for p in projects), caller.agent_id,
                *(f"{caller.team}/{p}" for p in projects), caller.team)

    async def _prompt(self, caller: Caller, event: dict[str, Any], session: str) -> str:
        """What memory holds about the prompt in the project, agent- and team-wide memory, but the
        turns of this very session (they are in the host's context already; its compaction
        summaries are not)."""
        prompt = " ".join(str(event.get("prompt") or "").split())[:MAX_QUERY_CHARS]
        if not prompt:
            return ""
        request = RetrievalRequest(query=prompt, namespaces=self._namespaces(caller), max_chars=self._s.budget_chars,
                                   min_score=self._s.min_score, leave_out_session=session)
        try:
            check_text(prompt, "query")  # the text rule, as at every edge (core/model/text.py)
        except DomainError as exc:
            raise HookError(_said(exc)) from None
        try:
            return await self._door.recall(caller, request)
        except Refused as exc:
            raise HookError(str(exc)) from None

    async def _start(self, caller: Caller) -> str:
        return await start_block(self._door, caller, self._s.start_chars, utc_now())

    async def _logged(self, caller: Caller, path: str, session: str,
                      parse: Callable[[list[bytes]], list[Turn]]) -> None:
        """The transcript's turns not logged yet (read by `parse`), logged; the offset moves past
        each part once the server has it, so a failure part-way sends nothing twice."""
        key = f"{caller.home}\n{session}\n{path}"
        async with self._offsets.lock(key):
            offset, budget = self._offsets.get(key), READ_BYTES
            while True:
                turns, new_offset = await asyncio.to_thread(read_new, path, offset, budget, parse)
                if len(turns) > LOG_BATCH and budget > MIN_READ_BYTES:
                    budget //= 2  # one call a part: a part logged is never logged again
                    continue
                await self._log(caller, session, turns)
                if new_offset == offset:
                    return
                self._offsets.put(key, new_offset)
                offset, budget = new_offset, READ_BYTES

    async def _reflect(self, caller: Caller, work: dict[str, Any], deadline: float | None) -> str:
        """Reflect the session (with the server's local model, if it has one, which may take its
        time). Past `deadline` it goes on after the hook is answered (`Later`); a team's server
        that cannot be reached then keeps the reflection for later (the turns are logged already)."""
        request = Reflect(str(work["session"]), namespace=caller.home)

        async def reflect() -> str:
            try:
                await self._door.reflect(caller, request)
            except Refused as exc:
                return str(exc)
            return ""

        async def reflect_or_keep() -> str:
            try:
                return await reflect()
            except Unreachable as exc:
                self._pending.keep({k: v for k, v in work.items() if k not in ("turns", "path", "format")})
                return f"{exc}: the session's reflection is kept and sent once it answers"

        return await (reflect() if deadline is None else self.later.run(reflect_or_keep, deadline))

    async def _log(self, caller: Caller, session: str, turns: list[Turn]) -> None:
        logged = [LoggedTurn(role=t.role, content=t.content, name=_name(t.name) if t.name else None, at=t.at)
                  for t in turns if t.content.strip() and not is_noise(t.role, t.content)]
        for start in range(0, len(logged), LOG_BATCH):
            request = LogTurns(session, logged[start:start + LOG_BATCH], caller.home, Domain.CODE_CONTEXT)
            try:
                check_text([[t.content, t.name or ""] for t in request.turns], "turns")
            except DomainError as exc:
                raise HookError(_said(exc)) from None
            try:
                await self._door.log(caller, request)
            except Refused as exc:
                raise HookError(str(exc)) from None


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
