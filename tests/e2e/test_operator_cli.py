"""Operator commands against a real data directory: export/import round trip, bad lines, audit,
stats, warnings, and the periodic metrics line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.servers import agent_memory_command, server_env

pytestmark = pytest.mark.anyio


def run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([agent_memory_command(), *args], env=env, input=stdin, capture_output=True, text=True,
                          timeout=120)


def offline_env(data: Path, **extra: str) -> dict[str, str]:
    # Chunks of up to 4 turns: _fill's compaction writes one summary, as the counts below assume.
    return server_env(data, MEMORY_VECTOR_BACKEND="none", MEMORY_RATE_LIMIT_PER_SECOND="0",
                      MEMORY_SYSTEM_TYPE="sys4", MEMORY_COMPACTION_CHUNK_TURNS="4", **extra)


async def _fill(env: dict[str, str]) -> None:
    """A store with a bit of everything: scopes, layers, unicode, tags, a conflict, session turns."""
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        async def call(tool: str, **arguments: object) -> dict:
            result = await client.call_tool(tool, arguments)
            return result.structured_content

        made = await call("memory_crud", action="create", items=[
            {"content": "Zürich office opens at 08:00 — café on floor 2 ☕", "tags": ["office", "zürich"]},
            {"content": "Short-lived note", "ttl_seconds": 3600, "priority": "low"}])
        first = made["items"][0]
        await call("memory_crud", action="update", items=[{"id": first["id"], "content": "v2", "if_match": "stale"}])
        await call("memory_crud", action="create", scope="team", namespace="ops", layer="meta",
                   items=[{"content": "Page the on-call only for errors.", "confidence": 0.8}])
        await call("memory_crud", action="create", scope="global", namespace="handbook", layer="long_term",
                   items=[{"content": "Company holidays are listed in the handbook."}])
        await call("memory_reflect", action="log", session_id="s1", turns=[
            {"role": "user", "content": f"Turn {n}: I prefer tea number {n}."} for n in range(4)])
        await call("memory_reflect", action="compact", session_id="s1", keep_recent=1)
        for port in (8080, 8081):  # a fact, and the change of mind that supersedes it
            await call("memory_reflect", action="reflect", session_id=f"p{port}",
                       facts=[f"The API listens on port {port}."])


async def test_export_import_round_trip_is_lossless(tmp_path: Path) -> None:
    source = offline_env(tmp_path / "a")
    await _fill(source)
    exported = run(source, "export")
    assert exported.returncode == 0, exported.stderr
    lines = exported.stdout.splitlines()
    assert len(lines) == 12 and "export: 12 entries" in exported.stderr
    assert sum(json.loads(line)["superseded_by"] is not None for line in lines) == 1
    assert "Zürich" in exported.stdout and "☕" in exported.stdout  # human-readable, not \\u escapes
    assert all(list(json.loads(line))[:3] == ["id", "scope", "namespace"] for line in lines)
    (tmp_path / "dump.jsonl").write_text(exported.stdout)
    target = offline_env(tmp_path / "b")
    imported = run(target, "import", str(tmp_path / "dump.jsonl"))
    assert imported.returncode == 0, imported.stderr
    assert "import: done, 12 entries imported" in imported.stderr and "import: 12/12" in imported.stderr
    again = run(target, "export")
    assert again.stdout == exported.stdout
    # Importing the same lines again: every id is already stored, nothing changes.
    twice = run(target, "import", stdin=exported.stdout)
    assert twice.returncode == 1 and "line 1: id" in twice.stderr and "already stored" in twice.stderr
    assert run(target, "export").stdout == exported.stdout
    only_team = run(target, "export", "--scope", "team", "--namespace", "ops")
    assert [json.loads(line)["namespace"] for line in only_team.stdout.splitlines()] == ["ops"]
    audit = run(target, "audit", "--action", "import")
    assert audit.returncode == 0 and len(audit.stdout.splitlines()) == 12


async def test_bad_lines_are_reported_by_number_and_rejected_or_skipped(tmp_path: Path) -> None:
    source = offline_env(tmp_path / "a")
    await _fill(source)
    good = run(source, "export").stdout.splitlines()
    broken = json.loads(good[1])
    broken["scope"] = "galaxy"
    oversized = json.loads(good[2])
    oversized["content"] = "x" * 40_000
    text = "\n".join([good[0], "{not json", json.dumps(broken), "", json.dumps(oversized), good[3], "[1, 2]"]) + "\n"
    target = offline_env(tmp_path / "b")
    rejected = run(target, "import", stdin=text)
    assert rejected.returncode == 1
    for expected in ("line 2: not JSON", "line 3: scope", "line 5: content has 40000 characters",
                     "line 7: not a JSON object"):
        assert expected in rejected.stderr, rejected.stderr
    assert "nothing imported" in rejected.stderr and run(target, "export").stdout == ""
    skipped = run(target, "import", "--skip-bad", stdin=text)
    assert skipped.returncode == 1 and "2 entries imported, 4 bad lines skipped" in skipped.stderr
    assert run(target, "export").stdout.splitlines() == [good[0], good[3]]
    missing = run(target, "import", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


async def test_audit_filters_and_stats(tmp_path: Path) -> None:
    env = offline_env(tmp_path / "a")
    await _fill(env)
    everything = [json.loads(line) for line in run(env, "audit").stdout.splitlines()]
    assert [r["at"] for r in everything] == sorted(r["at"] for r in everything)
    assert {"create", "update", "log", "compact"} <= {r["action"] for r in everything}
    conflicts = [json.loads(line) for line in run(env, "audit", "--action", "update", "--outcome", "conflict")
                 .stdout.splitlines()]
    assert len(conflicts) == 1 and conflicts[0]["agent_id"] == "launcher"
    later = run(env, "audit", "--since", "2999-01-01T00:00:00Z")
    assert later.stdout == "" and "audit: 0 rows" in later.stderr
    newest = [json.loads(line) for line in run(env, "audit", "--limit", "2").stdout.splitlines()]
    assert [r["seq"] for r in newest] == [r["seq"] for r in everything[-2:]]  # the newest two, oldest first
    stats = json.loads(run(env, "stats").stdout)
    assert stats["entries"] == 12 and stats["by_scope"] == {"agent": 10, "global": 1, "team": 1}
    assert stats["compacted"] == 3 and stats["conflicts"] == 1 and stats["database_bytes"] > 0
    assert stats["by_layer"]["session"] == 5


async def test_warnings_reports_what_is_new_and_metrics_are_logged(tmp_path: Path) -> None:
    data = tmp_path / "a"
    env = server_env(data, MEMORY_RATE_LIMIT_PER_SECOND="0", MEMORY_EMBEDDING_MODEL_DIR=str(tmp_path / "no-model"),
                     MEMORY_METRICS_LOG="1", MEMORY_METRICS_LOG_INTERVAL_SECONDS="1")
    assert run(env, "warnings").stdout.startswith("warnings: none")
    params = StdioServerParameters(command=agent_memory_command(), args=["serve"], env=env)
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=60) as client:
            import anyio

            with anyio.fail_after(30):  # the failed model load is logged by a background task: wait for it too
                while not all(word in (tmp_path / "stderr.log").read_text()
                              for word in ("metrics", "embedder_unavailable")):
                    await client.call_tool("memory_retrieve", {"query": "anything"})
                    await anyio.sleep(0.2)
    logged = [json.loads(line) for line in (tmp_path / "stderr.log").read_text().splitlines() if line.startswith("{")]
    metrics = next(line for line in logged if line["event"] == "metrics")
    assert metrics["tools"]["memory_retrieve"]["calls"] >= 1 and "retrieval" in metrics
    first = run(env, "warnings")
    assert first.returncode == 1 and "embedder_unavailable" in first.stdout and "1 errors" in first.stdout
    assert (data / "logs" / "agent-memory.log").exists()
    again = run(env, "warnings")
    assert again.returncode == 0 and again.stdout.startswith("warnings: none since")
    assert "embedder_unavailable" in run(env, "warnings", "--all").stdout
