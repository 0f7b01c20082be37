"""`agent-memory setup claude-code|gemini-cli|codex --check`: run the hooks the host's file holds, as
the host would, against a probe event each, and say per event what works and what does not.

The probes store nothing: the prompt and start events only read memory (what they would add is
counted, never shown), a turn event carries empty turns, and the capture events read an empty
transcript and reflect a session that has no turns. A helper that is still starting is waited for
(the first probe may take a few seconds while it loads)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from agent_memory.cli.host_files import EXIT_FAILED, EXIT_OK, SetupError, load_object
from agent_memory.cli.host_hooks import is_ours
from agent_memory.hooks.hosts import HOSTS, HookEvent

PROBE_SESSION = "agent-memory-check"
PROJECT_VARIABLE = {"claude-code": "CLAUDE_PROJECT_DIR", "gemini-cli": "GEMINI_PROJECT_DIR"}  # Codex: cwd only
COLD_WAIT_SECONDS = 40.0  # a helper starting on this machine loads the embedding model first


def installed_commands(data: dict, event: str, server_name: str) -> list[str]:
    """The commands of agent-memory's hooks under `event` in a host's hooks file."""
    groups = (data.get("hooks") or {}).get(event) if isinstance(data.get("hooks"), dict) else None
    return [h["command"] for group in groups or [] if isinstance(group, dict)
            for h in group.get("hooks") or [] if is_ours(h, server_name) and h.get("type") == "command"]


def probe_event(host: str, event: HookEvent, transcript: Path) -> dict:
    probe: dict = {"hook_event_name": event.name, "session_id": PROBE_SESSION, "cwd": os.getcwd(),
                   "transcript_path": str(transcript)}
    if event.role == "prompt":
        probe["prompt"] = "agent-memory setup --check: a probe prompt"
    elif event.role == "start":
        probe["source"] = "startup"
    elif event.role == "turn":
        probe.update(prompt="", prompt_response="")
    elif event.role == "end":
        probe["reason"] = "other"
    return probe


def run_probe(host: str, command: str, event: HookEvent, transcript: Path) -> tuple[bool, str]:
    """(works, what happened): one run, again while the helper is starting, up to COLD_WAIT_SECONDS."""
    env = {**os.environ, **({PROJECT_VARIABLE[host]: os.getcwd()} if host in PROJECT_VARIABLE else {})}
    deadline = time.monotonic() + COLD_WAIT_SECONDS
    while True:
        started = time.monotonic()
        try:
            done = subprocess.run(shlex.split(command), input=json.dumps(probe_event(host, event, transcript)),
                                  capture_output=True, text=True, timeout=event.host_timeout, env=env)
        except subprocess.TimeoutExpired:
            return False, f"no answer within the host's {event.host_timeout:g} s timeout"
        except (OSError, ValueError) as exc:
            return False, f"cannot run {command[:120]!r}: {getattr(exc, 'strerror', None) or exc}"
        ms = round((time.monotonic() - started) * 1000)
        said = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
        if "is starting" in said and time.monotonic() < deadline:
            time.sleep(1.0)  # the helper is loading: ask again, as the next event would
            continue
        if done.returncode != 0:
            return False, f"exit {done.returncode}: {said[:300]}"
        if said:
            return False, said[:300]
        if done.stdout.strip():
            try:
                out = json.loads(done.stdout)
            except ValueError:
                return False, "its output is not the JSON the host reads"
            added = (out.get("hookSpecificOutput") or {}).get("additionalContext") if isinstance(out, dict) else None
            if not isinstance(added, str):
                return False, "its output holds no additionalContext"
            return True, f"ok in {ms} ms, {len(added)} characters of memory it would add"
        return True, f"ok in {ms} ms"


def trusted(hooks_file: Path) -> bool:
    """Codex has a trust entry for some hook of `hooks_file` (`[hooks.state."<file>:<event>:<group>:<hook>"]
    trusted_hash` in its user config.toml). Whether the hash still matches is Codex's to say."""
    config = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "config.toml"
    try:
        with config.open("rb") as handle:
            state = tomllib.load(handle).get("hooks", {}).get("state", {})
    except (OSError, tomllib.TOMLDecodeError, AttributeError):
        return False
    return isinstance(state, dict) and any(k.startswith(f"{hooks_file}:") and isinstance(v, dict)
                                           and v.get("trusted_hash") for k, v in state.items())


def check(host: str, hooks_file: Path, server_name: str) -> int:
    try:
        path, data = load_object(hooks_file)
    except SetupError as exc:
        print(f"agent-memory: setup --check: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if not path.exists():
        print(f"setup --check: no {path}: run `agent-memory setup {host} --write` first")
        return EXIT_FAILED
    failed = 0
    print(f"setup --check: {host} hooks in {path}")
    with tempfile.TemporaryDirectory() as tmp:
        transcript = Path(tmp) / "probe.jsonl"
        transcript.write_text("")
        for event in HOSTS[host].events:
            commands = installed_commands(data, event.name, server_name)
            if not commands:
                failed += 1
                print(f"  {event.name:<17} missing: no agent-memory hook (run `agent-memory setup {host} --write`)")
                continue
            for command in commands:
                works, said = run_probe(host, command, event, transcript)
                failed += not works
                print(f"  {event.name:<17} {said if works else 'FAILED: ' + said}")
    print(f"setup --check: {'all hooks work' if not failed else f'{failed} not working'}"
          + ("" if not failed else "; `agent-memory warnings` lists what the hooks reported"))
    if host == "codex" and not trusted(path):
        print(f"setup --check: note: Codex has recorded no trust for any hook in {path}, and runs none it has not: "
              "start codex, open /hooks and trust the agent-memory hooks")
    return EXIT_OK if not failed else EXIT_FAILED
