"""Fixtures: real SQLite files in tmp_path (or a real PostgreSQL, tests/postgres.py), the real
server, the SDK's in-memory client.

One contract, two stores: the MCP tool tests of the modules in `BOTH_STORES` run on SQLite and on
PostgreSQL (each test that takes the `settings` or `store_backend` fixture, directly or through
`client`/`agent`, is parametrised by `store_backend`; on PostgreSQL only in the `auto` protocol mode,
which has nothing to do with the store, and never a test named `test_sqlite_*`, which is about
SQLite itself: `pytest_generate_tests`). `MEMORY_TEST_BACKENDS=sqlite` runs them on SQLite only.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from mcp import Client
from pydantic import BaseModel

from agent_memory.config import Settings, load_settings
from agent_memory.contracts.crud import MemoryCrudResult
from agent_memory.contracts.reflect import MemoryReflectResult
from agent_memory.tools.server import create_server
from tests.postgres import postgres_server, postgres_url  # noqa: F401 - fixtures

IDENTITY_KEY = "agent-memory/identity"
# Tool test modules whose tests run on both record stores.
BOTH_STORES = frozenset({
    "test_crud_actions.py", "test_crud_concurrency.py", "test_crud_permissions.py", "test_crud_list.py",
    "test_crud_subtree.py", "test_retrieve.py", "test_retrieve_time.py", "test_retrieve_relative_floor.py",
    "test_reflect.py", "test_reflect_compaction.py", "test_reflect_namespace.py", "test_audit_health.py",
    "test_text_rule.py", "test_crud_keys.py",
    "test_confidence.py", "test_retrieve_budget_shares.py",
    "test_domains.py", "test_retrieve_fresh.py", "test_read_lists.py",
    "test_supersede_undo.py", "test_projects_tools.py", "test_keeping.py", "test_reflect_model.py",
    "test_reflect_model_fallback.py", "test_retrieve_keyword_only.py",
})
STORE_BACKENDS = ("sqlite", "postgres")


def chosen_backends() -> list[str]:
    chosen = [b.strip() for b in os.environ.get("MEMORY_TEST_BACKENDS", ",".join(STORE_BACKENDS)).split(",")]
    unknown = sorted(set(chosen) - set(STORE_BACKENDS) - {""})
    if unknown:
        raise pytest.UsageError(f"MEMORY_TEST_BACKENDS: unknown store(s) {', '.join(unknown)}")
    return [b for b in STORE_BACKENDS if b in chosen]


MODES = ("auto", "legacy")  # the MCP protocol generations a client fixture speaks (see `mode`)


@pytest.hookimpl(tryfirst=True)  # before the `mode` fixture's own params are applied
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each test of a `BOTH_STORES` module that takes `settings` or `store_backend` runs on every
    chosen store; with the `mode` fixture too, on SQLite in both protocol modes and on PostgreSQL
    in `auto` only (the protocol has nothing to do with the store); a test named `test_sqlite_*`
    (about SQLite itself) on SQLite only. Combinations that would only repeat a check are never
    generated, rather than deselected, so every way of running the suite counts the same tests."""
    module = os.path.basename(metafunc.module.__file__ or "")
    if module not in BOTH_STORES or not {"settings", "store_backend"} & set(metafunc.fixturenames):
        return
    backends = chosen_backends()
    if metafunc.definition.originalname.startswith("test_sqlite_"):
        backends = [b for b in backends if b == "sqlite"]
    if "mode" not in metafunc.fixturenames:
        metafunc.parametrize("store_backend", backends, indirect=True)
        return
    combos = [(backend, mode) for mode in MODES for backend in backends if backend == "sqlite" or mode == "auto"]
    metafunc.parametrize(("store_backend", "mode"), combos, indirect=["store_backend"],
                         ids=[f"{mode}-{backend}" for backend, mode in combos])


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on anyio's pytest runner (`pytestmark = pytest.mark.anyio`): it keeps a
    fixture's setup, the test and the fixture's teardown in one task, as the SDK's cancel scopes
    require."""
    return "asyncio"


def identity(agent_id: str, system_type: str = "sys1", team: str = "red", skills: list[str] | None = None) -> dict:
    data: dict[str, Any] = {"agent_id": agent_id, "system_type": system_type, "team": team}
    if skills is not None:
        data["skills"] = skills
    return data


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {"data_dir": str(data_dir), "agent_id": "alice", "system_type": "sys1", "team": "red",
                                 "rate_limit_per_second": 0, "vector_backend": "none"}
    values.update(overrides)
    return load_settings(environ={}, overrides=values)


class Agent:
    """One caller on a client: sends its identity in every request's `_meta` (or none)."""

    def __init__(self, client: Client, ident: dict | None = None) -> None:
        self.client = client
        self.ident = ident

    async def call(self, tool: str, contract: type[BaseModel], arguments: dict[str, Any]) -> tuple[bool, dict]:
        meta = {IDENTITY_KEY: self.ident} if self.ident is not None else None
        result = await self.client.call_tool(tool, arguments, meta=meta)
        assert result.structured_content is not None
        # Every answer must have the typed shape of the contract, records included.
        contract.model_validate(result.structured_content, strict=True)
        assert json.loads(result.content[0].text) == result.structured_content
        return bool(result.is_error), result.structured_content

    async def crud(self, **arguments: Any) -> tuple[bool, dict]:
        return await self.call("memory_crud", MemoryCrudResult, arguments)

    async def create(self, content: str = "a memory", **arguments: Any) -> dict:
        item = {"content": content, **arguments.pop("item", {})}
        failed, data = await self.crud(action="create", items=[item], **arguments)
        assert not failed, data
        return data["items"][0]

    async def reflect(self, **arguments: Any) -> tuple[bool, dict]:
        return await self.call("memory_reflect", MemoryReflectResult, arguments)

    async def log(self, session_id: str, *turns: dict | str) -> dict:
        """Log turns (a plain string is a user turn); asserts success."""
        items = [{"role": "user", "content": t} if isinstance(t, str) else t for t in turns]
        failed, data = await self.reflect(action="log", session_id=session_id, turns=items)
        assert not failed, data
        return data

    def as_(self, ident: dict | None) -> Agent:
        return Agent(self.client, ident)


@pytest.fixture(autouse=True)
def _logging_put_back() -> Iterator[None]:
    """A test that runs a command in this process (`cli.main`) configures logging as the command
    does: a level filter, and stderr as pytest captured it for that test. Put the configuration back
    afterwards, so no later test logs to a closed stream or misses the lines it captures."""
    saved = structlog.get_config()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    structlog.configure(**saved)
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def store_backend(request: pytest.FixtureRequest) -> str:
    """The record store the `settings` fixture names (`sqlite` unless parametrised, see `BOTH_STORES`)."""
    return getattr(request, "param", "sqlite")


def store_settings(request: pytest.FixtureRequest, data_dir: Path, store_backend: str, **overrides: object) -> Settings:
    """`make_settings` on the store `store_backend` names (a fresh PostgreSQL database of its own)."""
    if store_backend == "postgres":
        overrides = {"backend": "postgres", "postgres_url": request.getfixturevalue("postgres_url"), **overrides}
    return make_settings(data_dir, **overrides)


@pytest.fixture
def settings(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> Settings:
    return store_settings(request, tmp_path / "data", store_backend)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def client(settings: Settings, mode: str) -> AsyncIterator[Client]:
    async with Client(create_server(settings), mode=mode) as connected:
        yield connected


@pytest.fixture
def agent(client: Client) -> Agent:
    """The launch identity (alice, sys1, team red) with no metadata."""
    return Agent(client)


def scalar(settings: Settings, sql: str) -> Any:
    """The first column of the first row `sql` (no parameters; portable SQL) gives, on either store."""
    if settings.backend == "postgres":
        import psycopg

        with psycopg.connect(settings.postgres_url) as pg:
            return pg.execute(sql).fetchone()[0]  # type: ignore[index]
    conn = sqlite3.connect(settings.sqlite_file)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def audit_rows(settings: Settings) -> list[sqlite3.Row] | list[dict[str, Any]]:
    """Every audit row, oldest first (rows read by column name), from either store."""
    if settings.backend == "postgres":
        import psycopg
        from psycopg.rows import dict_row

        with psycopg.connect(settings.postgres_url, row_factory=dict_row) as pg:
            return pg.execute("SELECT * FROM audit ORDER BY seq").fetchall()
    conn = sqlite3.connect(settings.sqlite_file)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM audit ORDER BY seq").fetchall()
    finally:
        conn.close()
