"""For bench_retrieve.py: where the machine's CPU time went while entries were being indexed
(issue 26 item 2: how close indexing comes to the embedder alone, and what else took the cores).

Read from /proc (Linux; elsewhere the report says it cannot): the server's threads, split by
niceness (the indexing thread and the ONNX threads it starts run at nice 10, everything serving
requests at 0), PostgreSQL's processes, this benchmark process (the client sending the writes
and the retrieves), everything else, and idle time, over the same wall-clock interval.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PROC = Path("/proc")


def stat_fields(stat: str) -> list[str]:
    """The fields of a /proc stat line after the command name (which may hold spaces)."""
    return stat[stat.rindex(")") + 2:].split()


def cpu_ticks(fields: list[str]) -> int:
    return int(fields[11]) + int(fields[12])  # utime, stime


def find_server(data_dir: str) -> int | None:
    """The pid of the benchmark server started with MEMORY_DATA_DIR=data_dir."""
    wanted = f"MEMORY_DATA_DIR={data_dir}".encode()
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"bench_server.py" in (entry / "cmdline").read_bytes() and \
                    wanted in (entry / "environ").read_bytes().split(b"\0"):
                return int(entry.name)
        except OSError:
            continue
    return None


@dataclass(frozen=True)
class Sample:
    server: int  # the whole server process (exited threads included)
    niced: int  # its live threads at nice > 0 (indexing)
    postgres: int
    client: int  # this process
    busy: int  # the whole machine, not idle
    idle: int


def sample(pid: int) -> Sample | None:
    try:
        server = cpu_ticks(stat_fields((PROC / str(pid) / "stat").read_text()))
        niced = 0
        for task in (PROC / str(pid) / "task").iterdir():
            try:
                fields = stat_fields((task / "stat").read_text())
            except OSError:
                continue
            if int(fields[16]) > 0:
                niced += cpu_ticks(fields)
        postgres = 0
        for entry in PROC.iterdir():
            if entry.name.isdigit():
                try:
                    if (entry / "comm").read_text().strip() == "postgres":
                        postgres += cpu_ticks(stat_fields((entry / "stat").read_text()))
                except OSError:
                    continue
        client = cpu_ticks(stat_fields((PROC / "self" / "stat").read_text()))
        cpu = [int(v) for v in (PROC / "stat").read_text().splitlines()[0].split()[1:]]
        idle = cpu[3] + cpu[4]  # idle, iowait
        return Sample(server, niced, postgres, client, sum(cpu[:8]) - idle, idle)
    except (OSError, ValueError, IndexError):
        return None


def report(start: Sample | None, end: Sample | None) -> str:
    """One line: core-seconds by consumer between the two samples."""
    if start is None or end is None:
        return "CPU by consumer: not measurable here (needs Linux /proc)"
    spent = {
        "indexing threads (nice 10)": end.niced - start.niced,
        "rest of the server": (end.server - start.server) - (end.niced - start.niced),
        "PostgreSQL": end.postgres - start.postgres,
        "benchmark client": end.client - start.client,
    }
    busy = end.busy - start.busy
    spent["other processes"] = max(0, busy - sum(spent.values()))
    spent["idle"] = end.idle - start.idle
    total = busy + spent["idle"] or 1
    return "CPU while indexing, core-seconds (share): " + ", ".join(
        f"{name} {ticks / TICK:.1f} ({100 * ticks / total:.0f}%)" for name, ticks in spent.items()
        if ticks or name != "PostgreSQL")
