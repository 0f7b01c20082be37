"""What each host's hook events are and what the hooks do with them: one table per host, read by
`setup` (what it installs, with the host's own timeout) and by the hook command and its helper
(how long a hook may take, what is spooled when the helper is not ready, what each event does,
which answer the host reads). Standard library only, and light (named tuples, not dataclasses,
whose import costs the hook command some 15 ms): the hook command imports it.

Roles:
- `start`: a session starts: the project's rules, facts and last summary are added to its context;
- `prompt`: the user sent a prompt: what memory holds about it is added to the prompt's context;
- `turns`: a turn ended: the new turns of the transcript are logged (Claude Code's JSONL, Codex's
  rollout JSONL: the table says which);
- `turn`: a turn ended, and the host sends it in the event (Gemini CLI's AfterAgent);
- `compact`: the host compacts its context: new turns logged, then the session reflected;
- `end`: the session ends: as `compact`.

A capture event (every role but `start` and `prompt`) that cannot be handed to the helper in time
is spooled for it, so a cold start loses nothing.
"""

from __future__ import annotations

from typing import NamedTuple

RECALL_ROLES = frozenset({"start", "prompt"})
CAPTURE_ROLES = frozenset({"turns", "turn", "compact", "end"})
REFLECT_ROLES = frozenset({"compact", "end"})
MARGIN = 0.7  # our own limit: this share of the host's timeout (the rest: starting Python, output)
MAX_SHARE = 0.8  # ... and never more than this share


class HookEvent(NamedTuple):
    name: str  # the host's event name
    role: str  # see the module's docstring
    host_timeout: float  # seconds; what setup installs (in the host's unit)
    limit: float  # seconds the hook may take in all (well inside host_timeout)

    @property
    def captures(self) -> bool:
        return self.role in CAPTURE_ROLES

    @property
    def answers(self) -> bool:
        """The host reads added context from this event's output."""
        return self.role in RECALL_ROLES


class HookHost(NamedTuple):
    events: tuple[HookEvent, ...]
    timeout_unit: float  # host units a second: 1 (seconds) or 1000 (milliseconds)
    matcher: bool  # each group names a matcher ("" for all)
    named: bool  # each hook carries a name (Gemini CLI: /hooks enable|disable NAME)
    transcript: str  # what capture reads at the event's `transcript_path`: "claude" (Claude Code's JSONL),
    # "codex" (Codex's rollout JSONL), or "" (none: the turns come in the events)

    def event(self, name: str) -> HookEvent | None:
        return next((e for e in self.events if e.name == name), None)


def _event(name: str, role: str, host_timeout: float, limit: float | None = None) -> HookEvent:
    return HookEvent(name, role, host_timeout, limit if limit is not None else round(host_timeout * MARGIN, 2))


HOSTS: dict[str, HookHost] = {
    # code.claude.com/docs/en/hooks: timeouts in seconds.
    "claude-code": HookHost((
        _event("SessionStart", "start", 10), _event("UserPromptSubmit", "prompt", 5), _event("Stop", "turns", 10),
        _event("PreCompact", "compact", 10), _event("SessionEnd", "end", 15, 12.0),
    ), timeout_unit=1, matcher=True, named=False, transcript="claude"),
    # geminicli.com/docs/hooks/reference: timeouts in milliseconds; BeforeAgent is Claude Code's
    # UserPromptSubmit, AfterAgent its Stop (the turn comes in the event), PreCompress its PreCompact.
    "gemini-cli": HookHost((
        _event("SessionStart", "start", 10), _event("BeforeAgent", "prompt", 5), _event("AfterAgent", "turn", 10),
        _event("PreCompress", "compact", 10), _event("SessionEnd", "end", 15, 12.0),
    ), timeout_unit=1000, matcher=False, named=True, transcript=""),
    # developers.openai.com/codex/hooks and codex-rs/hooks (checked with codex-cli 0.171.0): hooks.json
    # timeouts in seconds; no matcher (SessionStart's and PreCompact's would filter the source or
    # trigger); the turns are read from the rollout at transcript_path. SessionEnd, not in every
    # release's table, is capped at 3 s by Codex; the helper finishes what a hook gives up waiting for.
    "codex": HookHost((
        _event("SessionStart", "start", 10), _event("UserPromptSubmit", "prompt", 5), _event("Stop", "turns", 10),
        _event("PreCompact", "compact", 10), _event("SessionEnd", "end", 3),
    ), timeout_unit=1, matcher=False, named=False, transcript="codex"),
}
DEFAULT_LIMIT = 7.0  # an event no table names (the helper does nothing with it)


def transcript_format(host: str) -> str:
    """What `host`'s capture events read at `transcript_path` ("" for nothing)."""
    spec = HOSTS.get(host)
    return spec.transcript if spec is not None else ""


def event_of(host: str, name: str) -> HookEvent | None:
    spec = HOSTS.get(host)
    return spec.event(name) if spec is not None else None
