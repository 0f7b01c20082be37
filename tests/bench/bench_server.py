"""The real server plus a no-op tool that only benchmarks register: the floor of this stack
(same transport, dispatcher, identity resolution, validation and log line; no storage)."""

from __future__ import annotations

import sys

from pydantic import BaseModel, ConfigDict

from agent_memory.cli.main import _parser, _settings
from agent_memory.contracts.crud import MemoryCrudResult
from agent_memory.tools.server import ToolSpec
from agent_memory.transports.serve import serve


class NoopArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: str = "noop"


class NoopResult(BaseModel):
    items: list[dict] = []
    errors: list[dict] = []

    @classmethod
    def failed(cls, error: BaseModel) -> NoopResult:
        return cls(errors=[error.model_dump()])


async def _noop(app: object, call: object, args: NoopArgs, ctx: object) -> dict:
    return NoopResult().model_dump()


NOOP = ToolSpec(name="bench_noop", skill=None, description="Does nothing (benchmark floor).",
                args_model=NoopArgs, result_model=NoopResult, run=_noop)

# A page of 25 entries shaped like the benchmark's own, built once: the floor for moving a
# list page through the stack (serialisation, transport, client parsing), without storage.
_PAGE = {
    "items": [
        {"id": f"mem_01M80B16DKQMV05P6HR2928P{i:02d}", "scope": "agent", "namespace": "bench", "team": "bench",
         "owner_agent_id": "bench",
         "content": f"Benchmark memory {i}: the build for service {i % 17} needs flag --fast",
         "tags": ["bench"], "priority": "medium", "source": "manual", "confidence": 1.0, "layer": "long_term",
         "created_at": "2026-11-22T00:38:23.411949Z", "updated_at": "2026-11-22T00:38:23.411949Z",
         "expires_at": None, "version": 1, "etag": "47027bef0ce08575d328", "conflict": False,
         "conflict_of": None, "session_id": None, "promoted_from": None, "compacted": False,
         "superseded_by": None, "key": None, "domain": None, "read_agents": []}
        for i in range(25)
    ],
    "errors": [], "next_cursor": "eyJjIjoiMjAyNi0xMS0yMlQwMDozODoyMy40NTgzNTlaIiJ9.2G3EsSPelcrWwMPgZyLdTw",
    "has_more": True,
}


async def _page(app: object, call: object, args: NoopArgs, ctx: object) -> dict:
    return _PAGE


PAGE = ToolSpec(name="bench_page", skill=None, description="Returns a fixed 25-entry page (benchmark floor).",
                args_model=NoopArgs, result_model=MemoryCrudResult, run=_page)

if __name__ == "__main__":
    serve(_settings(_parser().parse_args(["serve", *sys.argv[1:]])), extra_tools=(NOOP, PAGE))
