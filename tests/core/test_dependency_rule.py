"""core/ imports nothing from mcp, aiosqlite, chromadb or psycopg (SPEC section 2)."""

from __future__ import annotations

import ast
from pathlib import Path

import agent_memory.core

FORBIDDEN = {"mcp", "mcp_types", "aiosqlite", "chromadb", "psycopg", "psycopg_pool", "pgvector", "structlog",
             "pydantic", "anyio"}


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_imports_no_adapter_library() -> None:
    core_dir = Path(agent_memory.core.__file__).parent
    files = sorted(core_dir.rglob("*.py"))
    assert files
    offenders = {str(f.relative_to(core_dir)): sorted(_imported_roots(f) & FORBIDDEN) for f in files}
    assert {name: libs for name, libs in offenders.items() if libs} == {}


def test_core_imports_only_core_from_the_package() -> None:
    core_dir = Path(agent_memory.core.__file__).parent
    for path in core_dir.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("agent_memory"):
                assert node.module.startswith("agent_memory.core"), f"{path.name} imports {node.module}"
