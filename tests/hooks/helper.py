"""Running `agent-memory hook HOST` as a host would: a subprocess per event, with its own
environment, and the hook helper it starts stopped afterwards."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


class HookRunner:
    """The hook command against one data directory and one private runtime directory."""

    def __init__(self, data_dir: Path, **settings: str) -> None:
        self.runtime = Path(tempfile.mkdtemp(prefix="amh-"))  # short: a socket path is limited
        os.chmod(self.runtime, 0o700)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
        self.env.update({"XDG_RUNTIME_DIR": str(self.runtime), "MEMORY_DATA_DIR": str(data_dir),
                         "MEMORY_AGENT_ID": "dev", "MEMORY_TEAM": "red", "MEMORY_VECTOR_BACKEND": "none",
                         "MEMORY_RATE_LIMIT_PER_SECOND": "0", "MEMORY_HOOK_IDLE_MINUTES": "5",
                         "MEMORY_HOOK_TIME_LIMIT": "60"})  # a loaded machine: wait for the model
        self.env.update({f"MEMORY_{k.upper()}": v for k, v in settings.items()})

    def run(self, event: dict[str, Any] | bytes | str, host: str = "claude-code", *, timeout: float = 60,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        data = event if isinstance(event, (bytes, str)) else json.dumps(event)
        return subprocess.run([sys.executable, "-m", "agent_memory", "hook", host],
                              input=data if isinstance(data, str) else data.decode("utf-8", "replace"),
                              capture_output=True, text=True, timeout=timeout, env={**self.env, **(env or {})})

    def context(self, event: dict[str, Any], env: dict[str, str] | None = None) -> str:
        """The additionalContext a recall event printed ("" for none); asserts the host contract."""
        done = self.run(event, env=env)
        assert done.returncode == 0, done.stderr
        if not done.stdout:
            return ""
        out = json.loads(done.stdout)
        assert out["hookSpecificOutput"]["hookEventName"] == event["hook_event_name"]
        return out["hookSpecificOutput"]["additionalContext"]

    def helper_pids(self) -> list[int]:
        pids = []
        for lock in self.runtime.rglob("*.lock"):
            text = lock.read_text().strip()
            if text.isdigit():
                pids.append(int(text))
        return pids

    def stop(self) -> None:
        for pid in self.helper_pids():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            for _ in range(100):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            else:
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.runtime, ignore_errors=True)


def transcript_line(kind: str, text: str, *, at: str = "2026-11-25T10:00:00.000Z", n: int = 0,
                    **extra: Any) -> str:
    if kind == "user":
        record = {"type": "user", "message": {"role": "user", "content": text}, "uuid": f"u{n}", "timestamp": at}
    else:
        record = {"type": "assistant", "message": {"id": f"msg{n}", "role": "assistant",
                                                    "content": [{"type": "text", "text": text}]},
                  "uuid": f"a{n}", "timestamp": at}
    record.update(extra)
    return json.dumps(record) + "\n"
