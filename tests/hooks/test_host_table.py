"""One table per host (`hooks/hosts.py`): what setup installs is what the hook command and its
helper read, so a host's timeout, our own limit, what is spooled and what answers cannot disagree."""

from __future__ import annotations

import pytest

from agent_memory.cli.host_hooks import hook_groups
from agent_memory.hooks.client import _limit
from agent_memory.hooks.daemon import host_output
from agent_memory.hooks.hosts import CAPTURE_ROLES, HOSTS, MAX_SHARE, RECALL_ROLES, event_of

EVENTS = [(host, event) for host, spec in HOSTS.items() for event in spec.events]


@pytest.mark.parametrize(("host", "event"), EVENTS, ids=[f"{h}-{e.name}" for h, e in EVENTS])
def test_each_hook_ends_well_inside_the_timeout_setup_installs(host: str, event, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.delenv("MEMORY_HOOK_TIME_LIMIT", raising=False)
    spec = HOSTS[host]
    installed = hook_groups(host, "agent-memory hook " + host, "agent-memory")[event.name]["hooks"][0]["timeout"]
    assert installed == round(event.host_timeout * spec.timeout_unit)
    assert _limit(host, event.name) == event.limit <= event.host_timeout * MAX_SHARE
    assert event.role in RECALL_ROLES | CAPTURE_ROLES
    assert event.captures == (event.role in CAPTURE_ROLES) and event.answers == (event.role in RECALL_ROLES)
    assert bool(host_output(host, event.name, "ctx")) == event.answers


def test_setup_installs_every_event_of_the_table_and_no_other() -> None:
    for host, spec in HOSTS.items():
        assert list(hook_groups(host, "agent-memory hook " + host, "agent-memory")) == [e.name for e in spec.events]


def test_gemini_cli_events_have_their_own_limits_and_its_captures_are_spooled() -> None:
    """Seen before the table: BeforeAgent got the default 7 s against the 5,000 ms setup installs,
    and AfterAgent and PreCompress were not spooled on a cold helper."""
    prompt = event_of("gemini-cli", "BeforeAgent")
    assert prompt is not None and prompt.limit == 3.5 and prompt.answers
    for name in ("AfterAgent", "PreCompress", "SessionEnd"):
        event = event_of("gemini-cli", name)
        assert event is not None and event.captures
    assert event_of("gemini-cli", "UserPromptSubmit") is None and event_of("claude-code", "BeforeAgent") is None


def test_an_event_no_table_names_does_nothing_and_answers_nothing() -> None:
    assert event_of("claude-code", "Notification") is None
    assert host_output("claude-code", "Notification", "ctx") == ""
    assert host_output("no-such-host", "SessionStart", "ctx") == ""


def test_codex_events_fit_its_own_limits_and_carry_no_matcher() -> None:
    """Codex clamps a SessionEnd hook to 3 s (seen with codex-cli 0.171.0: 'clamping SessionEnd hook
    timeout to 3s'); a matcher on SessionStart or PreCompact would filter the source or trigger."""
    end = event_of("codex", "SessionEnd")
    assert end is not None and end.host_timeout == 3 and end.limit == 2.1 and end.captures
    assert [e.name for e in HOSTS["codex"].events if e.captures] == ["Stop", "PreCompact", "SessionEnd"]
    groups = hook_groups("codex", "agent-memory hook codex", "agent-memory")
    assert all(set(group) == {"hooks"} and set(group["hooks"][0]) == {"type", "command", "timeout"}
               for group in groups.values())
    assert HOSTS["codex"].transcript == "codex" and HOSTS["claude-code"].transcript == "claude"
