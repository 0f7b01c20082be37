"""The background vector task, on a real SQLite file and a real Chroma directory: it never ends
quietly, and what it records for `agent-memory stats` follows it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from structlog.testing import capture_logs

from agent_memory.storage.chroma.chroma_index import ChromaIndex
from agent_memory.storage.chroma.runtime import VectorRuntime
from agent_memory.storage.embedding.embedder import ModelFiles
from agent_memory.storage.embedding.health import task_status
from agent_memory.storage.sqlite.database import Database
from agent_memory.storage.sqlite.migrations import migrate

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Fatal(BaseException):
    """Not an Exception: the sync loop does not catch it, so the task ends."""


async def test_a_task_that_ends_before_shutdown_is_logged_and_said_in_degraded(tmp_path: Path) -> None:
    def model_files() -> ModelFiles:
        raise Fatal

    db = Database(tmp_path / "memory.db")
    await db.open()
    try:
        await migrate(db)
        runtime = VectorRuntime(db, ChromaIndex(tmp_path / "chroma"), model_files)
        with capture_logs() as logs:
            runtime.start()
            with anyio.fail_after(30):
                while "stopped" not in (runtime.problem or ""):
                    await anyio.sleep(0.05)
            assert [e for e in logs if e["event"] == "vector_task_ended"] == [
                {"event": "vector_task_ended", "reason": "Fatal", "log_level": "error"}]
            (state,) = task_status(tmp_path / "chroma")["processes"]
            assert state["state"] == "stopped" and state["reason"] == "Fatal"
            await runtime.aclose()
        assert len([e for e in logs if e["event"] == "vector_task_ended"]) == 1  # not again at shutdown
        assert task_status(tmp_path / "chroma")["processes"] == []  # a stopped server leaves no state behind
    finally:
        await db.close()
