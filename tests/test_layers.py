"""The layers' dependency rule beyond core/ (tests/core/test_dependency_rule.py): storage adapters
import only core and storage; the MCP layer, the console, operator work and importers reach
storage only through the composition root (bootstrap.py, and stores.py, which builds either record
store's adapters); and no SQL is written outside storage/,
so a new store means new adapters, not edits all over the package. Beside them: the wire contracts
(contracts/) speak no protocol; ops/ and tools/ (the MCP adapter) import nothing from each other;
the console starts the server without importing serve.py; neither record store builds on the other."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import agent_memory

PACKAGE = Path(agent_memory.__file__).parent
# Pure modules under storage/ that read no store: error explanations, the vector task's status file,
# and private file creation (the data directory, made by the log and the auth secret too).
STORAGE_OUTSIDE_ADAPTERS = {"agent_memory.storage.failures", "agent_memory.storage.embedding.health",
                            "agent_memory.storage.files"}
COMPOSITION_ROOT = {"bootstrap.py", "stores.py"}
# Our SQL is written in capitals.
SQL = re.compile(r"\b(SELECT\b.*\bFROM|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE (TABLE|INDEX|VIRTUAL)|PRAGMA \w)",
                 re.DOTALL)


def _modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m.startswith("agent_memory")}


def _files(*parts: str) -> list[Path]:
    return sorted(p for part in parts for p in (PACKAGE / part).rglob("*.py")) if parts else []


def test_storage_imports_only_core_and_storage() -> None:
    inner = ("agent_memory.core", "agent_memory.storage")
    offenders = {str(p.relative_to(PACKAGE)): sorted(m for m in _modules(p) if not m.startswith(inner))
                 for p in _files("storage")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_outer_layers_reach_storage_only_through_the_composition_root() -> None:
    outer = _files("tools", "console", "ops", "importers", "integrations", "cli", "transports", "hooks",
                   "application", "contracts")
    outer += [p for p in PACKAGE.glob("*.py") if p.name not in COMPOSITION_ROOT]
    assert len(outer) > 20
    offenders = {str(p.relative_to(PACKAGE)): sorted(m for m in _modules(p) if m.startswith("agent_memory.storage")
                                                      and m not in STORAGE_OUTSIDE_ADAPTERS) for p in outer}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_no_sql_outside_storage() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(PACKAGE / "storage"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


def test_the_sql_check_sees_sql() -> None:
    assert SQL.search("SELECT id FROM entries") and SQL.search("\n  INSERT INTO audit (a) VALUES (?)")
    assert not SQL.search("Select a tool; update the entry, then delete it from the list")


def _importers_of(target: str, *parts: str) -> dict[str, list[str]]:
    """Modules under `parts` importing `target` or anything in it (at any depth of the file)."""
    found = {str(p.relative_to(PACKAGE)): sorted(m for m in _modules(p) if m == target or m.startswith(target + "."))
             for p in _files(*parts)}
    return {k: v for k, v in found.items() if v}


def _roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
    return roots


def test_the_wire_contracts_speak_no_protocol() -> None:
    """contracts/ (the models, records and error mapping the tools, the console and the operator
    commands share) imports no MCP and none of the layers that use it."""
    files = _files("contracts")
    assert files
    assert {str(p.relative_to(PACKAGE)): sorted(_roots(p) & {"mcp", "mcp_types", "starlette", "uvicorn"})
            for p in files if _roots(p) & {"mcp", "mcp_types", "starlette", "uvicorn"}} == {}
    outer = ("agent_memory.tools", "agent_memory.console", "agent_memory.ops", "agent_memory.transports",
             "agent_memory.bootstrap", "agent_memory.stores")
    assert {k: v for k, v in ((str(p.relative_to(PACKAGE)), sorted(m for m in _modules(p) if m.startswith(outer)))
                              for p in files) if v} == {}


def test_operator_work_does_not_import_the_mcp_adapter() -> None:
    assert _importers_of("agent_memory.tools", "ops") == {}


def test_the_mcp_adapter_does_not_import_operator_work() -> None:
    """What the MCP resources show of operator work (store statistics) is handed in by the
    composition root (`App.stats`)."""
    assert _importers_of("agent_memory.ops", "tools") == {}


def test_the_console_does_not_import_the_transports() -> None:
    """transports/serve.py mounts the console on its HTTP app; the console's command starts the
    server through cli/server_start.py (shared with `agent-memory serve`)."""
    assert _importers_of("agent_memory.transports", "console") == {}


def test_one_record_store_does_not_build_on_the_other() -> None:
    """What both stores share lives beside them under storage/ (the audit buffer, the repository
    frame), so storage/postgres/ imports nothing from storage/sqlite/ and the other way round."""
    assert _importers_of("agent_memory.storage.sqlite", "storage/postgres") == {}
    assert _importers_of("agent_memory.storage.postgres", "storage/sqlite") == {}


def test_the_shared_embedding_code_drags_in_no_store() -> None:
    """storage/embedding/ (the model, in-line embedding, query vectors, the background task's life)
    serves both stores' vector runtimes, so the PostgreSQL store never imports the Chroma runtime
    (storage/chroma/), and the shared code imports neither store nor Chroma."""
    assert _importers_of("agent_memory.storage.chroma", "storage/postgres") == {}
    stores = ("agent_memory.storage.chroma", "agent_memory.storage.sqlite", "agent_memory.storage.postgres")
    for store in stores:
        assert _importers_of(store, "storage/embedding") == {}
    files = _files("storage/embedding")
    assert files
    assert {str(p.relative_to(PACKAGE)) for p in files if _roots(p) & {"chromadb", "aiosqlite", "psycopg"}} == set()
