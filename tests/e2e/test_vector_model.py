"""Vectors of two embedding models never compare: the SQLite store records which model made its
vector index, and an index made by another model is rebuilt with the loaded one (never searched
with it); `reindex` switches the record too."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest
from mcp import Client
from structlog.testing import capture_logs

from agent_memory.storage.embedding.embedder import default_model_files
from agent_memory.tools.server import create_server
from tests.conftest import Agent, make_settings
from tests.e2e.servers import agent_memory_command, server_env
from tests.tools.test_retrieve import semantic_until

pytestmark = pytest.mark.anyio

PACKAGED = "all-MiniLM-L6-v2-int8"


def recorded_model(data: Path) -> str | None:
    with sqlite3.connect(data / "memory.db") as conn:
        row = conn.execute("SELECT value FROM server_meta WHERE key = 'embedding_model'").fetchone()
    return row[0] if row else None


def another_model(tmp_path: Path) -> Path:
    """A model folder of its own (the packaged files, linked): `embedding_model_dir` names it."""
    folder = tmp_path / "other-model"
    folder.mkdir()
    files = default_model_files("", int8_compute=False)
    (folder / "model.onnx").symlink_to(files.model)
    (folder / "tokenizer.json").symlink_to(files.tokenizer)
    return folder


async def test_an_index_made_by_another_model_is_rebuilt_with_the_loaded_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with Client(create_server(make_settings(data, vector_backend="chroma"))) as client:
        agent = Agent(client)
        entry = await agent.create("Glaciers carve valleys over thousands of years.")
        await semantic_until(agent, "how were the valleys shaped by ice?")
    assert recorded_model(data) == PACKAGED  # int8 compute is the same weights: the same space

    folder = another_model(tmp_path)
    settings = make_settings(data, vector_backend="chroma", embedding_model_dir=str(folder))
    with capture_logs() as logs:
        async with Client(create_server(settings)) as client:
            agent = Agent(client)
            found = await semantic_until(agent, "how were the valleys shaped by ice?", timeout=90)
            assert found["items"][0]["id"] == entry["id"]
    changed = [e for e in logs if e["event"] == "vector_index_model_changed"]
    assert len(changed) == 1 and changed[0]["made_with"] == PACKAGED
    assert changed[0]["loaded"].startswith("custom:other-model:")
    assert any(e["event"] == "vector_index_rebuilding" for e in logs)
    assert recorded_model(data) == changed[0]["loaded"]

    # The same model again: nothing to rebuild.
    with capture_logs() as logs:
        async with Client(create_server(settings)) as client:
            await semantic_until(Agent(client), "how were the valleys shaped by ice?")
    assert not [e for e in logs if e["event"] in ("vector_index_model_changed", "vector_index_rebuilding")]

    # `reindex` with the packaged model switches the index, and the record, back.
    env = server_env(data, MEMORY_VECTOR_BACKEND="chroma", MEMORY_SYSTEM_TYPE="sys4")
    done = subprocess.run([agent_memory_command(), "reindex"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert recorded_model(data) == PACKAGED
    with capture_logs() as logs:
        async with Client(create_server(make_settings(data, vector_backend="chroma"))) as client:
            found = await semantic_until(Agent(client), "how were the valleys shaped by ice?")
            assert found["items"][0]["id"] == entry["id"]
    assert not [e for e in logs if e["event"] == "vector_index_model_changed"]
