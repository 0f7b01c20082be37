"""`agent-memory import --from FORMAT PATH` for the formats other than `export`.

Reads every item, places it (bad items are reported and skipped, never abort the rest), then
stores the new entries in batches with progress on stderr. Stderr: progress every `--progress-every`
entries, then one line per bad item (`import: line 3: why`, `import: notes/a.md: why`) and a
summary. Stdout: one JSON summary line (machine-readable). Exit codes: 0 all read items imported
or already there, 1 some items were bad (the good ones are imported), 2 invalid arguments or an
unreadable input.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from agent_memory.config import Settings

if TYPE_CHECKING:  # imported when used: the command line parses without them
    from agent_memory.application.import_writer import ImportTally

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
MAX_PLACES_SAID = 20  # on stderr; the JSON summary lists every place

HELP = "read memories into the store: export records, plain notes, Markdown folders, or another memory store's export"
DESCRIPTION = (
    "--from export (the default): JSON lines as written by `agent-memory export`, ids, versions, etags and dates "
    "kept; nothing is imported when any line is bad unless --skip-bad. Exit codes: 0 all imported, 1 bad lines "
    "or failure, 2 invalid arguments. "
    "Other formats: notes (JSON lines of {content, optional id, tags, priority, confidence, layer, scope, "
    "namespace, team, created_at, updated_at, expires_at}), markdown (a folder of .md files, one entry per file), "
    "kg-jsonl (@modelcontextprotocol/server-memory's memory.jsonl), mem0 (get_all output), basic-memory (a "
    "project folder), memorynode (MemoryNode records, v2 or legacy: each lands by its own scope, what it cannot "
    "map is reported per record). Defaults: priority medium, confidence 1.0, source import, the source's dates "
    "(else the "
    "file's time, else now). Ids derive from the source, so a re-import skips what is there. Bad items are "
    "reported on stderr and skipped; progress on stderr; one JSON summary line on stdout. Exit codes: 0 done, "
    "1 some items bad (the others imported), 2 invalid arguments or unreadable input. See docs/imports.md.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `agent-memory import` (the store settings are added by the caller)."""
    from agent_memory.importers import FORMATS

    parser.add_argument("file", nargs="?", help="the input: a file (default: stdin) for export, notes, kg-jsonl, "
                                                "mem0 and memorynode; a folder or one .md file for markdown and "
                                                "basic-memory")
    parser.add_argument("--from", dest="import_format", choices=FORMATS, default="export", metavar="FORMAT",
                        help=f"the input's format: {', '.join(FORMATS)} (default: export)")
    parser.add_argument("--skip-bad", action="store_true",
                        help="export format: import the good lines, report and skip the bad (the other formats "
                             "always do)")
    target = parser.add_argument_group("where the memories land (every format but export)")
    target.add_argument("--scope", dest="import_scope", choices=["agent", "team", "global"],
                        help="default agent")
    target.add_argument("--namespace", dest="import_namespace", metavar="NAMESPACE",
                        help="default: the agent id (agent scope), the team (team scope), 'global' (global scope); "
                             "an agent-scope namespace starts with the agent id, a team-scope one with the team")
    target.add_argument("--agent-id", dest="agent_id", default=None, metavar="ID",
                        help="the owning agent (default: $MEMORY_AGENT_ID, else the OS user name)")
    target.add_argument("--team", dest="team", default=None,
                        help="the owning team of agent- and team-scope entries (default: $MEMORY_TEAM, else "
                             "'default')")
    target.add_argument("--layer", dest="import_layer", choices=["working", "session", "long_term", "meta"],
                        help="default long_term (a note's own layer wins)")
    target.add_argument("--tag", dest="import_tags", action="append", metavar="TAG",
                        help="add this tag to every entry (repeatable)")
    target.add_argument("--progress-every", type=int, default=500, metavar="N",
                        help="write in batches of N entries, with a progress line after each (default 500)")


def export_misuse(options: argparse.Namespace) -> str | None:
    """Why the target flags cannot go with `--from export` (its records carry their own place), or None."""
    used = [flag for flag, dest in (("--scope", "import_scope"), ("--namespace", "import_namespace"),
                                    ("--layer", "import_layer"), ("--tag", "import_tags"))
            if getattr(options, dest, None)]
    if used and getattr(options, "import_format", "export") == "export":
        return f"{', '.join(used)}: only for --from notes, markdown, kg-jsonl, mem0, basic-memory and memorynode " \
               "(export records keep their own scope, namespace, layer and tags)"
    return None


def _say(text: str) -> None:
    print(f"import: {text}", file=sys.stderr, flush=True)


def _target(options: argparse.Namespace, settings: Settings):  # noqa: ANN202 - placement.Target
    from agent_memory.core.model.models import Layer
    from agent_memory.importers.placement import Target, area

    caller = settings.launch_caller()
    scope, namespace, _ = area(options.import_scope or "agent", options.import_namespace, caller.team,
                               caller.agent_id)
    return Target(format=options.import_format, scope=scope, namespace=namespace, team=caller.team,
                  agent_id=caller.agent_id, layer=Layer(options.import_layer or "long_term"),
                  tags=tuple(options.import_tags or ()))


def open_input(file: str | None) -> TextIO:
    """The input of a line format: the file, or stdin (none or `-`), read as UTF-8 with the bytes
    that are not UTF-8 kept as lone surrogates (`surrogateescape`), so a line holding such bytes is
    one bad item (`core.model.text.not_utf8`), not the end of the import. Raises: OSError."""
    if file and file != "-":
        return open(file, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115 - the caller closes it
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream put in place of stdin (in-process)
        return sys.stdin
    return io.TextIOWrapper(buffer, encoding="utf-8", errors="surrogateescape")


def _items(options: argparse.Namespace, settings: Settings) -> list:
    """Every Draft and Bad of the input. Raises: OSError for a missing or unreadable input."""
    from agent_memory.importers import FOLDER_FORMATS, read_folder, read_lines

    if options.import_format in FOLDER_FORMATS:
        if not options.file:
            raise OSError(f"--from {options.import_format} needs a folder (or one Markdown file)")
        root = Path(options.file)
        if not root.exists():
            raise OSError(f"cannot read {root}: no such file or folder")
        return list(read_folder(options.import_format, root, settings.max_content_chars))
    try:
        source = open_input(options.file)
        try:
            return list(read_lines(options.import_format, source))
        finally:
            if source is not sys.stdin:
                source.close()
    except OSError as exc:
        raise OSError(f"cannot read {options.file or 'stdin'}: {exc.strerror}") from None


def import_other(options: argparse.Namespace, settings: Settings) -> int:
    import anyio

    from agent_memory.application.import_writer import ImportFailed, ImportTally, write_entries
    from agent_memory.bootstrap import open_records
    from agent_memory.core.model.clock import utc_now
    from agent_memory.core.model.rules import Limits
    from agent_memory.importers.drafts import Bad
    from agent_memory.importers.placement import place
    from agent_memory.logging import configure_logging

    configure_logging("warning", settings.log_format)
    every = options.progress_every
    if every < 1:
        print("agent-memory: --progress-every must be 1 or more", file=sys.stderr)
        return EXIT_USAGE
    try:
        target = _target(options, settings)
        items = _items(options, settings)
    except (ValueError, OSError) as exc:
        print(f"agent-memory: import: {exc}", file=sys.stderr)
        return EXIT_USAGE
    tally, limits, now = ImportTally(read=len(items)), Limits(max_content_chars=settings.max_content_chars), utc_now()
    placed, first_seen, unmapped = [], {}, []
    for item in items:
        if isinstance(item, Bad):
            tally.bad.append((item.where, item.why))
            continue
        try:
            entry = place(item, target, limits, now)
        except ValueError as exc:
            tally.bad.append((item.where, str(exc)))
            continue
        if entry.id in first_seen:
            tally.repeated.append((item.where, first_seen[entry.id]))
            continue
        first_seen[entry.id] = item.where
        placed.append((item.where, entry))
        unmapped += [(item.where, note) for note in item.notes]

    def progress(done: ImportTally) -> None:
        _say(f"{done.imported + done.present}/{len(placed)} entries ({done.imported} new, "
             f"{done.present} already stored)")

    async def run() -> ImportTally:
        async with open_records(settings) as records:
            return await write_entries(records.repo, records.operator, placed, tally, fmt=target.format,
                                       failures=records.failures, batch=every, progress=progress,
                                       redactor=records.redactor)

    try:
        anyio.run(run)
    except ImportFailed as exc:
        _say(f"stopped: {exc}")
        return EXIT_FAILED
    for where, why in tally.bad:
        _say(f"{where}: {why}")
    for where, first in tally.repeated:
        _say(f"{where}: the same memory as {first}, skipped")
    for where, note in unmapped:
        _say(f"{where}: {note}")
    landed = landing(tally)
    _say(f"done, {tally.imported} entries imported, {tally.present} already stored, {len(tally.repeated)} repeated, "
         f"{len(tally.bad)} bad skipped" + (f", {tally.redacted} secrets redacted" if tally.redacted else ""))
    for spot in landed[:MAX_PLACES_SAID]:
        team = "" if spot["team"] is None else f" (team {spot['team']})"
        _say(f"in {spot['scope']} {spot['namespace']}{team}: {spot['imported']} imported, "
             f"{spot['already_stored']} already stored")
    if len(landed) > MAX_PLACES_SAID:
        _say(f"and {len(landed) - MAX_PLACES_SAID} more places (the summary on stdout lists them all)")
    print(json.dumps({"format": target.format, "scope": target.scope.value, "namespace": target.namespace,
                      "team": None if target.scope.value == "global" else target.team, "agent_id": target.agent_id,
                      "read": tally.read, "imported": tally.imported, "already_stored": tally.present,
                      "repeated": len(tally.repeated), "bad": len(tally.bad), "redacted": tally.redacted,
                      "landed": landed} | ({"not_mapped": len(unmapped)} if target.format == "memorynode" else {})),
          flush=True)
    return EXIT_FAILED if tally.bad else EXIT_OK


def landing(tally: ImportTally) -> list[dict[str, object]]:
    """Where the entries are, place by place (a note or a mem0 user may put them elsewhere than the
    command's target): scope, namespace, team, entries imported and found already stored."""
    places = sorted(set(tally.landed) | set(tally.found), key=lambda p: (p[0], p[1], p[2] or ""))
    return [{"scope": scope, "namespace": namespace, "team": team, "imported": tally.landed[(scope, namespace, team)],
             "already_stored": tally.found[(scope, namespace, team)]} for scope, namespace, team in places]
