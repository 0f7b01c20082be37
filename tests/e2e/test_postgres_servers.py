"""Many servers, one store: three `agent-memory serve --http` processes on one PostgreSQL (as if on
three hosts, each with its own data directory), eight clients of two teams spread across them
creating, editing, deleting and listing, and one server killed with SIGKILL mid-run. Afterwards
every acknowledged write is present exactly once, versions never went backwards, no client ever
saw another team's memory, every entry is findable by meaning from every surviving server, and a
write on one server is found by meaning on another at once (read-your-writes across servers)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import anyio
import pytest

from tests.e2e.servers import (
    SECRET,
    agent_memory_command,
    free_port,
    http_client,
    retrieve,
    server_env,
    token,
    wait_for_port,
)

pytestmark = pytest.mark.anyio

AGENTS = [(f"agent-{i}", "sys3" if i % 2 else "sys1", "red" if i < 4 else "blue") for i in range(8)]
STEPS = 24


@contextmanager
def postgres_http_server(data_dir: Path, url: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    log_path = data_dir.parent / f"{data_dir.name}.log"
    data_dir.mkdir(parents=True)
    env = server_env(data_dir, MEMORY_AUTH_SECRET=SECRET, MEMORY_BACKEND="postgres", MEMORY_POSTGRES_URL=url,
                     MEMORY_RATE_LIMIT_PER_SECOND="0")
    with log_path.open("w") as log:
        proc = subprocess.Popen([agent_memory_command(), "serve", "--http", "--port", str(port)], env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for_port(proc, port, log_path)
            yield f"http://127.0.0.1:{port}/mcp", proc
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


async def test_three_servers_one_store_survive_a_sigkill(tmp_path: Path, postgres_url: str) -> None:
    acknowledged: dict[str, str] = {}  # entry id -> content last acknowledged
    versions: dict[tuple[str, str], list[int]] = {}  # (client, entry id) -> the versions it was shown, in order
    deleted: set[str] = set()
    # Updates and deletes sent but not acknowledged when a server died: they may or may not have
    # happened (entry id -> the content it would have, None for a delete).
    in_flight: dict[str, str | None] = {}
    teams_seen: dict[str, set[str]] = {}
    with ExitStack() as stack:
        servers = [stack.enter_context(postgres_http_server(tmp_path / f"host{n}", postgres_url)) for n in range(3)]
        urls = [url for url, _ in servers]
        victim_url, victim = servers[2]
        killed = anyio.Event()

        async def work(n: int, agent_id: str, system_type: str, team: str) -> None:
            rng = random.Random(agent_id)
            mine: dict[str, dict] = {}
            url = urls[n % 3]
            step = 0
            while step < STEPS:
                try:
                    async with http_client(url, token(agent_id, system_type, team)) as client:
                        while step < STEPS:
                            await _step(client, rng, mine, agent_id, system_type, team, step)
                            step += 1
                            if n == 0 and step == STEPS // 2:
                                os.kill(victim.pid, signal.SIGKILL)  # mid-run, with clients connected to it
                                victim.wait()
                                killed.set()
                except Exception:  # noqa: BLE001 - its server died: carry on through another
                    assert url == victim_url, f"{agent_id} lost {url}, which was not killed"
                    await killed.wait()
                    url = urls[(n + 1) % 2]
                    step += 1  # the step in flight may or may not have happened: only acknowledged ones count

        async def _step(client, rng, mine, agent_id, system_type, team, step) -> None:  # noqa: ANN001
            scope = "team" if system_type == "sys3" and step % 3 == 0 else "agent"
            where = {"scope": scope, "namespace": team} if scope == "team" else {}
            content = f"{agent_id} keeps note {step} about the {rng.choice(['harbour', 'orchard', 'glacier'])}"
            made = await client.call_tool("memory_crud", {"action": "create", "layer": "working", **where,
                                                          "items": [{"content": content}]})
            assert not made.is_error, made.structured_content
            entry = made.structured_content["items"][0]
            acknowledged[entry["id"]] = content
            versions.setdefault((agent_id, entry["id"]), []).append(entry["version"])
            mine[entry["id"]] = {**entry, "where": where}
            if step % 4 == 1:
                target = mine[rng.choice(list(mine))]
                new = f"{target['content']} (edited)"
                in_flight[target["id"]] = new
                updated = await client.call_tool("memory_crud", {
                    "action": "update", **target["where"], "if_match": target["etag"],
                    "items": [{"id": target["id"], "content": new}]})
                assert not updated.is_error, updated.structured_content
                changed = updated.structured_content["items"][0]
                mine[target["id"]] = {**changed, "where": target["where"]}
                acknowledged[target["id"]] = new
                del in_flight[target["id"]]
                versions[(agent_id, target["id"])].append(changed["version"])
            if step % 7 == 6:
                gone = mine.pop(rng.choice(list(mine)))
                in_flight[gone["id"]] = None
                removed = await client.call_tool("memory_crud", {"action": "delete", **gone["where"],
                                                                 "items": [{"id": gone["id"]}]})
                assert not removed.is_error, removed.structured_content
                deleted.add(gone["id"])
                del in_flight[gone["id"]]
            for args in ({"action": "list", "limit": 100},
                         {"action": "list", "scope": "team", "namespace": team, "limit": 100}):
                listed = await client.call_tool("memory_crud", args)
                assert not listed.is_error, listed.structured_content
                teams_seen.setdefault(agent_id, set()).update(e["team"] for e in listed.structured_content["items"])
                for e in listed.structured_content["items"]:
                    versions.setdefault((agent_id, e["id"]), []).append(e["version"])

        with anyio.fail_after(600):
            async with anyio.create_task_group() as tg:
                for n, (agent_id, system_type, team) in enumerate(AGENTS):
                    tg.start_soon(work, n, agent_id, system_type, team)
        assert victim.poll() == -signal.SIGKILL

        for agent_id, _, team in AGENTS:
            assert teams_seen[agent_id] == {team}, agent_id
        for (agent_id, entry_id), seen in versions.items():  # what one client saw, in the order it saw it
            assert seen == sorted(seen), f"{agent_id} saw {entry_id} go back: {seen}"

        survivors = urls[:2]
        stored: dict[str, str] = {}
        for agent_id, system_type, team in AGENTS:
            async with http_client(survivors[0], token(agent_id, system_type, team)) as client:
                for args in ({"action": "list", "limit": 100},
                             {"action": "list", "scope": "team", "namespace": team, "limit": 100}):
                    page = (await client.call_tool("memory_crud", args)).structured_content
                    assert not page["has_more"]
                    for entry in page["items"]:
                        assert stored.get(entry["id"], entry["content"]) == entry["content"]
                        stored[entry["id"]] = entry["content"]
        alive = {i: c for i, c in acknowledged.items() if i not in deleted}
        assert len(in_flight) <= 2  # at most the clients of the killed server had a call in flight
        for entry_id, content in alive.items():  # every acknowledged write, as acknowledged
            if entry_id in stored:
                assert stored[entry_id] in (content, in_flight.get(entry_id, content)), entry_id
            else:
                assert entry_id in in_flight and in_flight[entry_id] is None, f"{entry_id} was lost"
        assert not (set(stored) & deleted)
        assert len(set(stored.values())) == len(stored)  # no write stored twice (each content is unique)
        alive = {i: stored[i] for i in alive if i in stored}

        # Findable by meaning from every surviving server, once the outbox is applied by them.
        sample = random.Random(7).sample(sorted(alive), 12)
        owners = {agent_id: (system_type, team) for agent_id, system_type, team in AGENTS}
        for url in survivors:
            for entry_id in sample:
                agent_id = alive[entry_id].split(" ")[0]
                system_type, team = owners[agent_id]
                async with http_client(url, token(agent_id, system_type, team)) as client:
                    # A guard, not a speed target: 21 s in all alone, but one full-suite run on 2 cores
                    # (2026-11-28) passed 120 s here for one of the 12 entries; the cause is open.
                    with anyio.fail_after(300):
                        while True:
                            found = await retrieve(client, alive[entry_id], limit=5)
                            if any(item["id"] == entry_id for item in found["items"]) and not found["keyword_only"]:
                                break
                            await anyio.sleep(0.5)

        # Read-your-writes across servers: written on one, found by meaning on the other at once.
        async with http_client(survivors[0], token("agent-0", "sys1", "red")) as writer, \
                http_client(survivors[1], token("agent-0", "sys1", "red")) as reader:
            made = await writer.call_tool("memory_crud", {"action": "create", "items": [
                {"content": "The lighthouse keeper's cat is called Marmalade."}]})
            found = await retrieve(reader, "What is the name of the lighthouse keeper's cat?", limit=3)
            assert made.structured_content["items"][0]["id"] in [item["id"] for item in found["items"]]
