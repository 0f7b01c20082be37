"""Handlers of the `agent-memory` commands other than `serve`, `console` and `token` (cli/tokens.py); each
returns an exit code."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from agent_memory.config import Settings

if TYPE_CHECKING:  # each command imports what it works with when it runs (`--help` stays quick)
    from agent_memory.bootstrap import Records

T = TypeVar("T")
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


async def _on_records(settings: Settings, work: Callable[[Records], Awaitable[T]]) -> T:
    """`work` on the store of `settings`, opened (and migrated) for this command only."""
    from agent_memory.bootstrap import open_records

    async with open_records(settings) as records:
        return await work(records)


def reindex(options: argparse.Namespace, settings: Settings) -> int:
    import anyio

    from agent_memory.application.maintenance import OperationFailed, reindex
    from agent_memory.logging import configure_logging

    configure_logging("warning", settings.log_format)
    try:
        anyio.run(_on_records, settings, reindex)
    except OperationFailed as exc:
        print(f"agent-memory: reindex failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _print_victims(victims: list) -> None:  # noqa: ANN001 - core Victim rows
    for victim in victims:
        print(f"{victim.entry_id}\t{victim.scope}\t{victim.namespace}\t{victim.reason}")


def prune(options: argparse.Namespace, settings: Settings) -> int:
    dry_run = options.dry_run
    import anyio

    from agent_memory.application.maintenance import prune
    from agent_memory.logging import configure_logging

    configure_logging("warning", settings.log_format)
    victims = anyio.run(_on_records, settings, lambda records: prune(records, dry_run=dry_run))
    _print_victims(victims)
    reasons: dict[str, int] = {}
    for victim in victims:
        reasons[victim.reason] = reasons.get(victim.reason, 0) + 1
    detail = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
    verb = "would delete" if dry_run else "deleted"
    held = len({victim.held for victim in victims if victim.held is not None})
    kept = f"; {held} sessions would be kept in long-term memory first" if dry_run and held else ""
    print(f"prune: {verb} {len(victims)} entries" + (f" ({detail})" if detail else "") + kept, file=sys.stderr)
    return EXIT_OK


def erase(options: argparse.Namespace, settings: Settings) -> int:
    import anyio

    from agent_memory.application.maintenance import OperationFailed, erase, erase_plan
    from agent_memory.core.model.errors import InvalidParams
    from agent_memory.core.model.models import Scope
    from agent_memory.logging import configure_logging

    configure_logging("warning", settings.log_format)
    scope, namespace, cascade = Scope(options.erase_scope), options.erase_namespace, options.cascade
    session = options.erase_session
    try:
        planned = anyio.run(_on_records, settings, lambda records: erase_plan(records, scope, namespace, cascade,
                                                                                session))
    except InvalidParams as exc:
        print(f"agent-memory: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    where = (f"session {session} of " if session else "") + f"{scope.value} namespace {namespace}" + (
        " and every namespace under it" if cascade else "")
    namespaces = sorted({v.namespace for v in planned})
    if options.dry_run:
        _print_victims(planned)
        print(f"erase: would erase {len(planned)} entries in {where} ({len(namespaces)} namespaces)",
              file=sys.stderr)
        return EXIT_OK
    if not planned:
        print(f"erase: nothing to erase in {where}", file=sys.stderr)
        return EXIT_OK
    if not options.yes:
        print(f"Erase {len(planned)} entries in {where} ({', '.join(namespaces[:5])}"
              f"{', ...' if len(namespaces) > 5 else ''}) from SQLite and the vector index? This cannot be undone. "
              "Type 'yes' to confirm: ", end="", file=sys.stderr, flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            print("erase: aborted, nothing erased", file=sys.stderr)
            return EXIT_FAILED
    try:
        erased, vectors = anyio.run(_on_records, settings, lambda records: erase(records, scope, namespace, cascade,
                                                                                  session))
    except OperationFailed as exc:
        print(f"agent-memory: erase: {exc}", file=sys.stderr)
        return EXIT_FAILED
    _print_victims(erased)
    print(f"erase: erased {len(erased)} entries in {where}; {vectors}", file=sys.stderr)
    return EXIT_OK


def _quiet(settings: Settings) -> None:
    from agent_memory.logging import configure_logging

    configure_logging("warning", settings.log_format)


def export(options: argparse.Namespace, settings: Settings) -> int:
    import anyio

    from agent_memory.application.transfer import export_entries
    from agent_memory.bootstrap import open_records
    from agent_memory.contracts.export_lines import export_line

    _quiet(settings)
    if options.cascade and not options.select_namespace:
        print("agent-memory: --cascade needs --namespace", file=sys.stderr)
        return EXIT_USAGE

    async def run() -> int:
        async with open_records(settings) as records:
            if options.output:
                with open(options.output, "w", encoding="utf-8") as out:
                    return await export_entries(records.operator, lambda entry: out.write(export_line(entry) + "\n"),
                                                scope=options.select_scope, namespace=options.select_namespace,
                                                cascade=options.cascade)
            count = await export_entries(records.operator, lambda entry: sys.stdout.write(export_line(entry) + "\n"),
                                         scope=options.select_scope, namespace=options.select_namespace,
                                         cascade=options.cascade)
            sys.stdout.flush()
            return count

    try:
        count = anyio.run(run)
    except OSError as exc:
        print(f"agent-memory: export failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"export: {count} entries", file=sys.stderr)
    return EXIT_OK


def import_(options: argparse.Namespace, settings: Settings) -> int:
    import anyio

    from agent_memory.application.import_writer import ImportFailed
    from agent_memory.application.transfer import ImportReport, import_entries
    from agent_memory.bootstrap import open_records
    from agent_memory.cli.imports import export_misuse, import_other, open_input
    from agent_memory.contracts.export_lines import read_lines
    from agent_memory.core.model.rules import Limits

    if getattr(options, "import_format", "export") != "export":  # notes, markdown, other stores
        return import_other(options, settings)
    if misuse := export_misuse(options):
        print(f"agent-memory: import: {misuse}", file=sys.stderr)
        return EXIT_USAGE
    _quiet(settings)
    try:
        source = open_input(options.file)
    except OSError as exc:
        print(f"agent-memory: import: cannot read {options.file}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE

    def progress(report: ImportReport) -> None:
        print(f"import: {report.imported}/{report.read} entries", file=sys.stderr, flush=True)

    async def run() -> ImportReport:
        report = ImportReport()
        parsed = read_lines(source, Limits(max_content_chars=settings.max_content_chars), report)
        async with open_records(settings) as records:
            return await import_entries(records.repo, records.operator, parsed, report, failures=records.failures,
                                        on_error="skip" if options.skip_bad else "abort", progress=progress)

    try:
        report = anyio.run(run)
    except ImportFailed as exc:
        print(f"import: stopped: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if source is not sys.stdin:
            source.close()
    for number, why in report.bad:
        print(f"import: line {number}: {why}", file=sys.stderr)
    if report.bad and not options.skip_bad:
        print(f"import: {len(report.bad)} bad lines; nothing imported (use --skip-bad to import the others)",
              file=sys.stderr)
        return EXIT_FAILED
    skipped = f", {len(report.bad)} bad lines skipped" if report.bad else ""
    print(f"import: done, {report.imported} entries imported{skipped}", file=sys.stderr)
    return EXIT_FAILED if report.bad else EXIT_OK


def audit(options: argparse.Namespace, settings: Settings) -> int:
    import anyio

    from agent_memory.bootstrap import open_records
    from agent_memory.core.model.errors import InvalidParams
    from agent_memory.core.model.rules import normalise_timestamp
    from agent_memory.core.ports import AuditQuery

    _quiet(settings)
    try:
        since = normalise_timestamp(options.since, "--since") if options.since else None
    except InvalidParams as exc:
        print(f"agent-memory: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    if options.limit is not None and options.limit < 1:
        print("agent-memory: --limit must be 1 or more", file=sys.stderr)
        return EXIT_USAGE

    async def run() -> list:
        async with open_records(settings) as records:
            return await records.operator.audit_rows(AuditQuery(
                since=since, agent=options.agent, action=options.action, outcome=options.outcome, limit=options.limit))

    rows = anyio.run(run)
    for row in rows:
        print(json.dumps(row, ensure_ascii=False))
    print(f"audit: {len(rows)} rows", file=sys.stderr)
    return EXIT_OK


def stats(options: argparse.Namespace, settings: Settings) -> int:
    import anyio

    from agent_memory.application.inspection import store_stats
    from agent_memory.bootstrap import local_vector_dir, open_records
    from agent_memory.storage.embedding.health import task_status

    _quiet(settings)

    async def run() -> dict:
        async with open_records(settings) as records:
            found = await store_stats(records.operator, chroma_dir=local_vector_dir(settings))
        if settings.vector_backend != "none" and local_vector_dir(settings) and settings.backend != "list":
            found["vector_task"] = task_status(settings.chroma_dir)  # as the running servers record it
        return found

    print(json.dumps(anyio.run(run), indent=2, ensure_ascii=False))
    return EXIT_OK


def warnings(options: argparse.Namespace, settings: Settings) -> int:
    from agent_memory.application.inspection import (
        WarningsReport,
        hook_failures_since_last_call,
        warnings_since_last_call,
    )
    from agent_memory.hooks.client import FAILURES_FILE, HookFailed, runtime_dir

    if settings.log_dir is None:
        print("agent-memory: the list store keeps no log file", file=sys.stderr)
        return EXIT_USAGE
    report = warnings_since_last_call(settings.log_dir, everything=options.all)
    try:  # this user's hooks, whatever their settings
        hooks = hook_failures_since_last_call(runtime_dir() / FAILURES_FILE, everything=options.all)
    except HookFailed:  # no private runtime directory: no hook could record a failure there either
        hooks = WarningsReport(since=None)
    since = "kept" if options.all or report.since is None else f"since {report.since}"
    if not report.lines and not hooks.lines:
        print(f"warnings: none {since}")
        return EXIT_OK
    if hooks.lines:
        print(f"hook failures: {len(hooks.lines)} (this user's `agent-memory hook` runs, any settings)")
        for (host, event, reason), count, last in hooks.counted("host", "hook_event", "reason"):
            print(f"  {count:>5}  {host} {event or '?'}: {reason}  (last {last})")
    if report.lines:
        errors = sum(1 for line in report.lines if line.get("level") in ("error", "critical"))
        print(f"warnings: {len(report.lines) - errors} warnings and {errors} errors {since}")
        for level, event, count, last in report.summary():
            print(f"  {count:>5}  {level:<8} {event}  (last {last})")
        if options.lines > 0:
            print("latest:")
            for line in report.lines[-options.lines:]:
                print("  " + json.dumps(line, ensure_ascii=False))
    return EXIT_FAILED


HANDLERS = {"reindex": reindex, "prune": prune, "erase": erase, "export": export, "import": import_,
            "audit": audit, "stats": stats, "warnings": warnings}
