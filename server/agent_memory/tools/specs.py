"""The three published tools: their contracts, descriptions, skills and runners (each runner
imports its tool's code when first called, so a server answers its handshake without it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_types import Tool, ToolAnnotations
from pydantic import BaseModel

from agent_memory.contracts.crud import MemoryCrudArgs, MemoryCrudResult
from agent_memory.contracts.reflect import MemoryReflectArgs, MemoryReflectResult
from agent_memory.contracts.retrieve import MemoryRetrieveArgs, MemoryRetrieveResult
from agent_memory.core.model.commands import Call
from agent_memory.core.model.models import Skill
from agent_memory.tools.descriptions import CRUD_DESCRIPTION, REFLECT_DESCRIPTION, RETRIEVE_DESCRIPTION
from agent_memory.tools.json_schema import published_schema

if TYPE_CHECKING:
    from agent_memory.bootstrap import App

Runner = Callable[["App", Call, Any, Any], Awaitable[dict[str, Any]]]  # (app, call, args, request context)


@dataclass(frozen=True)
class ToolSpec:
    """One published tool. `run` returns the result in the shape of `result_model` (which must
    offer `failed(ErrorInfo)` for error results)."""

    name: str
    skill: Skill | None
    description: str
    args_model: type[BaseModel]
    result_model: Any
    run: Runner
    annotations: ToolAnnotations | None = None

    def definition(self) -> Tool:
        return Tool(
            name=self.name,
            description=self.description,
            input_schema=published_schema(self.args_model, fold_nullable=False),
            output_schema=published_schema(self.result_model, fold_nullable=False),
            annotations=self.annotations,
        )


def _crud(app: App, call: Call, args: Any) -> Awaitable[dict[str, Any]]:
    from agent_memory.tools.crud_tool import run_memory_crud

    return run_memory_crud(app.door.memories, call, args)


def _retrieve(app: App, call: Call, args: Any) -> Awaitable[dict[str, Any]]:
    from agent_memory.tools.retrieve_tool import run_memory_retrieve

    return run_memory_retrieve(app.door.recall, call, args)


def _reflect(app: App, call: Call, args: Any, ctx: Any) -> Awaitable[dict[str, Any]]:
    from agent_memory.tools.reflect_tool import run_memory_reflect

    return run_memory_reflect(app.door.sessions, call, args, ctx)


MEMORY_CRUD = ToolSpec(
    name="memory_crud",
    skill=Skill.CRUD,
    description=CRUD_DESCRIPTION,
    args_model=MemoryCrudArgs,
    result_model=MemoryCrudResult,
    run=lambda app, call, args, ctx: _crud(app, call, args),
    annotations=ToolAnnotations(title="Memory CRUD", destructive_hint=True, idempotent_hint=False,
                                open_world_hint=False),
)
MEMORY_RETRIEVE = ToolSpec(
    name="memory_retrieve",
    skill=Skill.RETRIEVE,
    description=RETRIEVE_DESCRIPTION,
    args_model=MemoryRetrieveArgs,
    result_model=MemoryRetrieveResult,
    run=lambda app, call, args, ctx: _retrieve(app, call, args),
    annotations=ToolAnnotations(title="Memory retrieve", read_only_hint=True, open_world_hint=False),
)
MEMORY_REFLECT = ToolSpec(
    name="memory_reflect",
    skill=Skill.REFLECT,
    description=REFLECT_DESCRIPTION,
    args_model=MemoryReflectArgs,
    result_model=MemoryReflectResult,
    run=lambda app, call, args, ctx: _reflect(app, call, args, ctx),
    annotations=ToolAnnotations(title="Memory reflect", destructive_hint=False, idempotent_hint=False,
                                open_world_hint=False),
)
BUILTIN_TOOLS: tuple[ToolSpec, ...] = (MEMORY_CRUD, MEMORY_RETRIEVE, MEMORY_REFLECT)
