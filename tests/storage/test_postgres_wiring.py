"""The composition root on PostgreSQL: the server and the operator commands get PostgreSQL's
adapters, the log line never shows the password, a missing driver says what to install, and the
maintenance commands (reindex, prune, erase) work on it with the real embedding model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from agent_memory.application import maintenance
from agent_memory.bootstrap import open_app, open_records
from agent_memory.config import ConfigError
from agent_memory.core.memories.crud import CrudService
from agent_memory.core.memories.secrets import Redactor
from agent_memory.core.model.clock import utc_now
from agent_memory.core.model.commands import NewEntry
from agent_memory.core.model.cursor import CursorCodec
from agent_memory.core.model.models import Scope
from agent_memory.core.model.rules import Limits
from agent_memory.stores import store_log_fields
from tests.conftest import make_settings
from tests.storage.stores import ALICE

pytestmark = pytest.mark.anyio
pytest.importorskip("psycopg", reason="the postgres extra is not installed")


def test_the_log_line_names_the_store_without_its_password(tmp_path: Path) -> None:
    sqlite = make_settings(tmp_path / "data")
    assert store_log_fields(sqlite) == {"sqlite": sqlite.sqlite_file}
    postgres = make_settings(tmp_path / "data", backend="postgres",
                             postgres_url="postgresql://memory:s3cret@db.example:5432/memory")
    assert store_log_fields(postgres) == {"postgres": "postgresql://memory:***@db.example:5432/memory"}


async def test_a_missing_driver_names_the_extra_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "psycopg" else real(name, *a))
    settings = make_settings(tmp_path / "data", backend="postgres", postgres_url="postgresql://memory@db.example/m")
    with pytest.raises(ConfigError, match=r"from a clone of agent-memory: pip install '\.\[postgres\]'"):
        async with open_records(settings):
            pass


async def test_the_server_and_the_commands_get_postgres_adapters(tmp_path: Path, postgres_url: str) -> None:
    settings = make_settings(tmp_path / "data", backend="postgres", postgres_url=postgres_url,
                             reflection_interval_seconds=0, prune_interval_seconds=0)
    async with open_app(settings) as app:
        assert (app.store.backend, type(app.operator).__name__) == ("postgres", "PostgresOperatorStore")
        assert app.vectors is None  # vector_backend none
        made = await app.crud.create(ALICE, Scope.AGENT, "alice", NewEntry("kept in PostgreSQL"))
    async with open_records(settings) as records:
        assert await records.operator.stored_ids([made.id]) == {made.id}
        assert type(records.vectors()).__name__ == "NoneType"
    assert not (tmp_path / "data" / "memory.db").exists()  # nothing written to SQLite


async def test_reindex_prune_and_erase_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    settings = make_settings(tmp_path / "data", backend="postgres", postgres_url=postgres_url,
                             vector_backend="chroma", reflection_interval_seconds=0, prune_interval_seconds=0)
    async with open_records(settings) as records:
        runtime = records.vectors()
        assert type(runtime).__name__ == "PgVectorRuntime"
        await runtime.aclose()
        audit = records.store.audit_log()
        audit.start()
        crud = CrudService(records.repo, audit, CursorCodec(b"k" * 32), Limits(), utc_now, Redactor())
        for n in range(3):
            await crud.create(ALICE, Scope.AGENT, "alice", NewEntry(f"note {n} about the build cache"))
        await audit.aclose()
    async with open_records(settings) as records:  # each command opens the store for itself
        assert await maintenance.reindex(records) >= 3  # the queued creates and the re-queued entries
    async with open_records(settings) as records:
        assert await maintenance.reindex(records) == 3  # every entry queued again and applied
    async with open_records(settings) as records:
        assert (await records.operator.stored_vectors(), await records.operator.vector_backlog()) == (3, 0)
    async with open_records(settings) as records:
        assert await maintenance.prune(records, dry_run=True) == []
    async with open_records(settings) as records:
        erased, vectors = await maintenance.erase(records, Scope.AGENT, "alice", cascade=False)
    assert len(erased) == 3 and vectors == "vectors removed"
    async with open_records(settings) as records:
        assert (await records.operator.stored_vectors(), await records.operator.vector_backlog()) == (0, 0)
