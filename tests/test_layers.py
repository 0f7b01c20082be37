"""The layers' dependency rule, written once (`FLOORS`): every module lives on one floor of the
house, and imports only its own room and the floors below, never a floor above (an upward arrow)
and never another room of its own floor (the start of a circle). The tests after it say what one
floor alone cannot: storage adapters import only core and storage, everything else reaches storage
only through the composition root; no SQL outside storage/; the wire contracts speak no protocol;
neither record store builds on the other; integrations/ are MCP clients that import nothing else
of the package (tests/core/test_dependency_rule.py keeps core/ to the standard library)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import agent_memory

PACKAGE = Path(agent_memory.__file__).parent
# Pure modules under storage/ that read no store: the vector task's status file, and private file
# creation (the data directory, made by the log and the auth secret too).
STORAGE_OUTSIDE_ADAPTERS = {"agent_memory.storage.embedding.health", "agent_memory.storage.files"}
# Database drivers, and the store package each belongs to (its knowledge lives there alone).
DRIVERS = {"sqlite3": "storage/sqlite", "aiosqlite": "storage/sqlite", "psycopg": "storage/postgres",
           "psycopg_pool": "storage/postgres", "chromadb": "storage/chroma"}
COMPOSITION_ROOT = {"bootstrap.py", "stores.py"}
# Our SQL is written in capitals.
SQL = re.compile(r"\b(SELECT\b.*\bFROM|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE (TABLE|INDEX|VIRTUAL)|PRAGMA \w)",
                 re.DOTALL)


# Top floor first. A room is a package or a module; the rooms of one floor import none of each other.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("agent_memory.__main__",),  # `python -m agent_memory`
    ("agent_memory.cli",),  # everything that parses argv or talks to a person
    ("agent_memory.transports",),  # stdio and HTTP serving, bearer tokens, the public paths
    ("agent_memory.tools", "agent_memory.console", "agent_memory.hooks"),  # the adapters: MCP, console, hooks
    ("agent_memory.bootstrap",),  # the composition root: builds the App (services, use cases)
    ("agent_memory.stores",),  # ... and either record store's adapters
    ("agent_memory.importers",),  # other stores' formats, read into drafts (the import command stores them)
    ("agent_memory.contracts",),  # the wire contracts and their mapping to typed requests
    ("agent_memory.application",),  # the use cases: the one door into the services
    ("agent_memory.logging",),
    # adapters of the core's ports: SQLite, PostgreSQL, Chroma, the embedding model; models that distil
    ("agent_memory.storage", "agent_memory.distillers"),
    ("agent_memory.config",),
    ("agent_memory.settings",),
    ("agent_memory.setting_values",),
    ("agent_memory.projects",),  # which project a directory is (the hooks and the server agree)
    # The domain (standard library only), one floor per concept:
    ("agent_memory.core.sessions",),  # sessions and reflection: log, compact, distil, consolidate
    ("agent_memory.core.recall",),  # retrieval: plan, candidates, ranking, the context block
    ("agent_memory.core.memories",),  # memories by id: crud, keys, conflicts, lineage, pruning, secrets
    ("agent_memory.core.access",),  # who may do what: identity, the gate, visibility, read lists, tokens
    ("agent_memory.core.ports",),  # what the domain needs of a store
    ("agent_memory.core.model",),  # the vocabulary: models, ids, time, errors, limits, areas, statements
    ("agent_memory.core",),  # the domain's face
    ("agent_memory",),  # the package's face (its version)
)
APART = ("agent_memory.integrations",)  # MCP clients for agent frameworks: they talk to a server, not to it


def _room(module: str) -> tuple[int, str] | None:
    """(floor, room) of a module: the longest room name that is it or holds it."""
    found = [(len(room), floor, room) for floor, rooms in enumerate(FLOORS) for room in rooms
             if module == room or module.startswith(room + ".")]
    return max(found)[1:] if found else None


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(("agent_memory", *parts)).removesuffix(".__init__")


def test_every_module_imports_only_its_own_room_and_the_floors_below() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _name(path)
        if name.startswith(APART):
            continue
        here = _room(name)
        assert here is not None, f"{name} is on no floor: give it one in FLOORS"
        for module in sorted(_modules(path)):
            there = _room(module)
            if there is None:
                offenders.append(f"{name} -> {module} (apart)")
            elif there[0] < here[0] or (there[0] == here[0] and there[1] != here[1]):
                offenders.append(f"{name} -> {module}")
    assert offenders == []


def test_the_floor_check_sees_an_upward_arrow() -> None:
    assert _room("agent_memory.core.memories.crud")[1] == "agent_memory.core.memories"  # type: ignore[index]
    assert _room("agent_memory.core")[0] == len(FLOORS) - 2  # type: ignore[index]
    assert _room("agent_memory.core.model.models")[0] > _room("agent_memory.core.access.permissions")[0]  # type: ignore[index]
    assert _room("agent_memory.tools.server")[0] < _room("agent_memory.application.memories")[0]  # type: ignore[index]
    assert _room("agent_memory.tools")[1] != _room("agent_memory.console")[1]  # type: ignore[index]


def test_integrations_import_nothing_of_the_package_but_themselves() -> None:
    files = _files("integrations")
    assert files
    assert {_name(p): sorted(m for m in _modules(p) if not m.startswith(APART)) for p in files
            if any(not m.startswith(APART) for m in _modules(p))} == {}


def test_the_package_root_holds_only_the_entry_point_settings_logging_and_the_composition_root() -> None:
    # projects.py belongs with the settings: which project a directory is, as the `project` settings say.
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == [
        "__init__.py", "__main__.py", "bootstrap.py", "config.py", "logging.py", "projects.py",
        "setting_values.py", "settings.py", "stores.py"]


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


def test_a_database_driver_is_imported_only_in_its_stores_package() -> None:
    """What a driver's errors mean (a full disk, a busy database, a refused value) is told by the
    store's own package (`storage/*/failures.py`) and reaches the layers above as a
    `core.ports.FailureReader` the composition root hands them."""
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        wrong = sorted(driver for driver, home in DRIVERS.items()
                       if driver in _roots(path) and not path.is_relative_to(PACKAGE / home))
        if wrong:
            offenders[str(path.relative_to(PACKAGE))] = wrong
    assert offenders == {}


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
    outer = ("agent_memory.tools", "agent_memory.console", "agent_memory.hooks", "agent_memory.transports",
             "agent_memory.bootstrap", "agent_memory.stores")
    assert {k: v for k, v in ((str(p.relative_to(PACKAGE)), sorted(m for m in _modules(p) if m.startswith(outer)))
                              for p in files) if v} == {}


def test_operator_work_does_not_import_the_mcp_adapter() -> None:
    assert _importers_of("agent_memory.tools", "application") == {}


def test_the_mcp_adapter_does_not_import_operator_work() -> None:
    """What the MCP resources show of operator work (store statistics) is handed in by the
    composition root (`App.stats`)."""
    operator_work = ("agent_memory.application.inspection", "agent_memory.application.maintenance",
                     "agent_memory.application.transfer", "agent_memory.application.import_writer")
    assert {path: found for path, found in _importers_of("agent_memory.application", "tools").items()
            if set(found) & set(operator_work)} == {}


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


def _redactors_made(tree: ast.AST) -> list[int]:
    """Lines where a `Redactor` is made (a call of the name)."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id == "Redactor"]


def test_secret_redaction_is_configured_in_one_place() -> None:
    """`redact_secrets` is read, and the one `Redactor` made, only by the composition root, which
    hands it to every write path; no service, writer or command has a default redactor to fall
    back on (a missed wiring would then ignore the setting), so one left out fails to start."""
    made = {path.relative_to(PACKAGE).as_posix(): lines for path in sorted(PACKAGE.rglob("*.py"))
            if (lines := _redactors_made(ast.parse(path.read_text(encoding="utf-8"))))}
    assert list(made) == ["bootstrap.py"] and len(made["bootstrap.py"]) == 1
    readers = [path.relative_to(PACKAGE).as_posix() for path in sorted(PACKAGE.rglob("*.py"))
               if re.search(r"\.redact_secrets\b", path.read_text(encoding="utf-8"))]
    assert readers == ["bootstrap.py"]


def test_the_redactor_check_sees_a_default_redactor() -> None:
    tree = ast.parse("def log(turns, redactor=Redactor()):\n    return Redactor(False)\n")
    assert _redactors_made(tree) == [1, 2]
