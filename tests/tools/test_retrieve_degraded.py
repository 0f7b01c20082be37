"""Retrieval without a working model: keyword answers at once, `degraded` says why."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from agent_memory.storage.embedding.embedder import default_model_files
from agent_memory.tools.server import create_server
from tests.conftest import Agent, make_settings
from tests.tools.test_retrieve import retrieve

pytestmark = pytest.mark.anyio


async def test_missing_model_degrades_to_keyword_only_with_the_reason(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", vector_backend="chroma", embedding_model_dir=str(tmp_path / "none"))
    async with Client(create_server(settings)) as client:
        agent = Agent(client)
        entry = await agent.create("Penguins huddle to keep warm.")
        with anyio.fail_after(30):
            while True:
                failed, data = await retrieve(agent, query="penguins warm")
                if data["degraded"] and "missing" in data["degraded"]:
                    break
                await anyio.sleep(0.1)
        assert not failed and [i["id"] for i in data["items"]] == [entry["id"]]
        # A process that cannot embed does not keep the vector directory to itself: another
        # server with a working model can take it over.
        import fcntl

        lock = os.open(tmp_path / "data" / "chroma.lock", os.O_RDWR)
        try:
            for _ in range(50):  # (it retries now and then, holding the lock for that moment)
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    await anyio.sleep(0.02)
            else:
                raise AssertionError("the vector directory stays locked by a process without a model")
        finally:
            os.close(lock)


async def test_tools_list_and_keyword_retrieval_answer_before_the_model_is_loaded(tmp_path: Path) -> None:
    model_dir = tmp_path / "slow-model"
    model_dir.mkdir()
    real = default_model_files()
    shutil.copy(real.tokenizer, model_dir / "tokenizer.json")
    os.mkfifo(model_dir / "model.onnx")  # reading it blocks until we write: the model is "loading"
    settings = make_settings(tmp_path / "data", vector_backend="chroma", embedding_model_dir=str(model_dir),
                             retrieval_load_wait_seconds=0.5)

    released = threading.Event()

    def release() -> None:
        released.set()
        with open(model_dir / "model.onnx", "wb") as fifo:
            fifo.write(real.model.read_bytes())

    async with Client(create_server(settings)) as client:
        try:
            assert {t.name for t in (await client.list_tools()).tools} >= {"memory_crud", "memory_retrieve"}
            agent = Agent(client)
            entry = await agent.create("Seals sleep in the water.")
            failed, data = await retrieve(agent, query="seals sleep", mode="keyword")
            assert not failed and [i["id"] for i in data["items"]] == [entry["id"]]
            started = time.monotonic()
            failed, data = await retrieve(agent, query="seals sleep")
            # It waited for the model (bounded by retrieval_load_wait_seconds), then said why not.
            assert time.monotonic() - started >= 0.5
            assert not failed and data["degraded"] and "loading" in data["degraded"]
            assert [i["id"] for i in data["items"]] == [entry["id"]]
            # mode semantic with nothing to fall back on is an error saying why, never an empty success.
            failed, data = await retrieve(agent, query="where do marine mammals rest?", mode="semantic")
            [error] = data["errors"]
            assert failed and error["code"] == "INTERNAL" and error["details"] == {"reason": "semantic_unavailable"}
            assert "loading" in error["message"] and data["items"] == []
            threading.Thread(target=release, daemon=True).start()
            with anyio.fail_after(60):
                while True:
                    failed, data = await retrieve(agent, query="where do marine mammals rest?", mode="semantic",
                                                  min_score=0)
                    if data["degraded"] is None and data["items"]:
                        break
                    await anyio.sleep(0.1)
            assert data["items"][0]["id"] == entry["id"]
        finally:
            if not released.is_set():  # never leave the loader blocked on the pipe
                threading.Thread(target=release, daemon=True).start()
