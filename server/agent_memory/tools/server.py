"""The MCP server factory: publishes the tools a caller is granted and dispatches calls."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import structlog
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    TextContent,
)

from agent_memory import __version__
from agent_memory.config import Settings
from agent_memory.contracts.crud import ErrorInfo
from agent_memory.contracts.errors import internal_error, parse_model, storage_failure, to_error_info, writable
from agent_memory.core.model.commands import Call
from agent_memory.core.model.errors import DomainError, Forbidden, InvalidParams
from agent_memory.core.model.ids import new_request_id
from agent_memory.core.model.models import Caller
from agent_memory.core.ports.failures import FailureReader
from agent_memory.tools import prompts
from agent_memory.tools.identity import caller_from_request, resolve_caller, resolve_http_caller
from agent_memory.tools.instructions import server_instructions
from agent_memory.tools.opening import ServerState, opened, opening
from agent_memory.tools.specs import BUILTIN_TOOLS, ToolSpec

__all__ = ["BUILTIN_TOOLS", "ToolSpec", "create_server"]

if TYPE_CHECKING:  # the services, the store and the tools' code are imported once a server opens
    from agent_memory.bootstrap import App

log = structlog.get_logger("agent_memory.tools")

def _store_failures() -> FailureReader:
    from agent_memory.bootstrap import store_failures

    return store_failures()


def _caller(ctx: ServerRequestContext[ServerState, Any]) -> Caller:
    params = ctx.session.client_params
    session_meta = params.meta if params is not None else None
    state = ctx.lifespan_context
    if ctx.request is not None:  # HTTP: the bearer token decides
        return resolve_http_caller(ctx.meta, session_meta, caller_from_request(ctx.request),
                                   trust_meta=state.settings.trust_client_meta)
    return resolve_caller(ctx.meta, session_meta, state.launch_caller)


def _result(spec: ToolSpec | None, payload: dict[str, Any] | ErrorInfo, is_error: bool) -> CallToolResult:
    if isinstance(payload, dict):
        data = payload
    elif spec is None:
        data = {"items": [], "errors": [payload.model_dump(mode="json")]}
    else:
        data = spec.result_model.failed(payload).model_dump(mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False, separators=(",", ":")))],
        structured_content=data,
        is_error=is_error,
    )


def _client_text(value: object, limit: int) -> str:
    """A value the client sent, as it may appear in a log line or a message: text cut to `limit`
    characters with lone surrogates escaped (they cannot be written as UTF-8); anything else by
    its type alone (str() of an integer over 4,300 digits raises)."""
    return writable(value[:limit]) if isinstance(value, str) else f"<{type(value).__name__}>"


def _outcome(data: dict[str, Any]) -> tuple[str, bool]:
    items, errors = data.get("items", []), data.get("errors", [])
    if not errors:
        return "ok", False
    if items:
        return "partial", False
    return str(errors[0]["code"]), True


class Dispatcher:
    def __init__(self, tools: Sequence[ToolSpec], *, hooks_capture: bool = False) -> None:
        self._tools = {spec.name: spec for spec in tools}
        self._prompts = prompts.offered(hooks_capture)
        # Built once: schema generation costs milliseconds, and the SDK's modern HTTP path looks
        # up a tool's input schema on every tools/call.
        self._definitions = {spec.name: spec.definition() for spec in tools}

    def input_schema(self, name: str) -> dict[str, Any] | None:
        definition = self._definitions.get(name)
        return None if definition is None else definition.input_schema

    async def list_tools(
        self, ctx: ServerRequestContext[ServerState, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        try:
            caller = _caller(ctx)
        except DomainError as error:
            # A JSON-RPC error, not an empty or full list: hosts show a failed tools/list to the
            # person who wrote the configuration, and an unknown caller has no skills to list.
            log.warning("tools_list_identity_refused", reason=error.message, field=error.details.get("field"))
            info = to_error_info(error)
            raise MCPError(INVALID_PARAMS, info.message, info.model_dump(mode="json")) from None
        ctx.lifespan_context.handshake_answered()  # the handshake's last answer
        return ListToolsResult(tools=[
            self._definitions[s.name] for s in self._tools.values() if s.skill is None or s.skill in caller.skills
        ])

    async def call_tool(self, ctx: ServerRequestContext[ServerState, Any], params: CallToolRequestParams
                        ) -> CallToolResult:
        started = time.perf_counter()
        request_id = new_request_id()
        arguments: dict[str, Any] = params.arguments or {}
        spec = self._tools.get(params.name)
        name = _client_text(params.name, 64)
        fields: dict[str, object] = {
            "request_id": request_id,
            "tool": name,
            "action": _client_text(arguments.get("action"), 32) if "action" in arguments else None,
            "scope": _client_text(arguments.get("scope", "agent"), 32),
        }
        structlog.contextvars.clear_contextvars()
        app: App | None = None
        try:
            app = await ctx.lifespan_context.app()
            if spec is None:
                raise InvalidParams(f"unknown tool {name}; the tools are {', '.join(self._tools)}", field="name",
                                    allowed=list(self._tools))
            caller = _caller(ctx)
            fields.update(agent_id=caller.agent_id, team=caller.team, system_type=caller.system_type.value)
            app.rate_limiter.take(caller, time.monotonic())  # one budget with the console
            if spec.skill is not None and spec.skill not in caller.skills:
                granted = ", ".join(sorted(s.value for s in caller.skills)) or "none"
                raise Forbidden(f"agent {caller.agent_id} is not granted the {spec.name} skill (granted: {granted}); "
                                "skills come with the identity: skills in agent-memory/identity, --skills or "
                                "MEMORY_SKILLS at launch, or the bearer token's skills", skill=spec.name)
            args = parse_model(spec.args_model, arguments)
            data = await spec.run(app, Call(caller, request_id, spec.name), args, ctx)
            outcome, is_error = _outcome(data)
            fields.update(items=len(data.get("items", [])), errors=len(data.get("errors", [])))
            return _result(spec, data, is_error)
        except DomainError as error:
            outcome = error.code
            return _result(spec, to_error_info(error), True)
        except Exception as exc:
            outcome = "INTERNAL"
            # a full disk, a busy database: say so (the store's own reading, even if it never opened)
            refused = storage_failure(exc, request_id, app.failures if app is not None else _store_failures())
            if refused is not None:
                return _result(spec, to_error_info(refused), True)
            log.exception("tool_failed", **fields)
            return _result(spec, internal_error(request_id), True)
        finally:
            duration_ms = round((time.perf_counter() - started) * 1000, 3)
            if app is not None:
                app.metrics.observe(name if spec else "unknown", outcome, duration_ms)
            log.info("tool_invocation", outcome=outcome, duration_ms=duration_ms, **fields)  # fields["tool"]: which

    async def list_prompts(self, ctx: ServerRequestContext[ServerState, Any], params: PaginatedRequestParams | None
                           ) -> ListPromptsResult:
        try:
            return ListPromptsResult(prompts=prompts.listed(_caller(ctx), self._prompts))
        except DomainError as error:
            info = to_error_info(error)
            raise MCPError(INVALID_PARAMS, info.message, info.model_dump(mode="json")) from None

    async def get_prompt(self, ctx: ServerRequestContext[ServerState, Any], params: GetPromptRequestParams
                         ) -> GetPromptResult:
        """A JSON-RPC error (INVALID_PARAMS, with the code and details of the tools' errors) for an
        unknown prompt, a missing or malformed argument, a refused identity or skill."""
        try:
            return prompts.render(_caller(ctx), params.name, params.arguments, self._prompts)
        except DomainError as error:
            info = to_error_info(error)
            log.info("prompt_refused", prompt=_client_text(params.name, 64), code=info.code)
            raise MCPError(INVALID_PARAMS, info.message, info.model_dump(mode="json")) from None

    async def list_resources(self, ctx: ServerRequestContext[ServerState, Any], params: Any) -> ListResourcesResult:
        from agent_memory.tools import resources

        return ListResourcesResult(resources=resources.RESOURCES)

    async def list_resource_templates(self, ctx: ServerRequestContext[ServerState, Any], params: Any
                                      ) -> ListResourceTemplatesResult:
        from agent_memory.tools import resources

        return ListResourceTemplatesResult(resource_templates=resources.TEMPLATES)

    async def read_resource(self, ctx: ServerRequestContext[ServerState, Any], params: ReadResourceRequestParams
                            ) -> ReadResourceResult:
        try:
            caller = _caller(ctx)
        except DomainError as error:
            info = to_error_info(error)
            raise MCPError(-32602, info.message, info.model_dump()) from None
        from agent_memory.tools import resources

        try:
            return await resources.read(await ctx.lifespan_context.app(), caller, str(params.uri))
        except MCPError:
            raise
        except Exception:  # never internal text to the client: a request id, and the traceback in the log
            request_id = new_request_id()
            log.exception("resource_read_failed", request_id=request_id, uri=str(params.uri)[:200])
            raise MCPError(-32603, "internal error", internal_error(request_id).model_dump()) from None


def create_server(settings: Settings, *, extra_tools: Sequence[ToolSpec] = (),
                  on_open: Callable[[App | None], None] | None = None, defer_vectors: bool = False
                  ) -> Server[ServerState]:
    """Build the MCP server. `extra_tools` lets benchmarks add a tool of their own; `on_open` is
    told the opened app (and None when it closes): the memory console serves from it.
    `defer_vectors` (stdio): the vector runtime starts loading once `tools/list` has been answered,
    at the first call or resource read, or VECTORS_AT_THE_LATEST_SECONDS after the store opened,
    whichever comes first, so that the load does not compete with the host's handshake."""
    dispatcher = Dispatcher([*BUILTIN_TOOLS, *extra_tools], hooks_capture=settings.hooks_capture)

    @asynccontextmanager
    async def lifespan(_: Server[ServerState]) -> AsyncIterator[ServerState]:
        async with (opening if defer_vectors else opened)(settings, on_open) as state:
            yield state

    return Server(
        "agent-memory",
        version=__version__,
        instructions=server_instructions(settings),
        lifespan=lifespan,
        get_tool_input_schema=dispatcher.input_schema,
        on_list_tools=dispatcher.list_tools,
        on_call_tool=dispatcher.call_tool,
        on_list_resources=dispatcher.list_resources,
        on_list_resource_templates=dispatcher.list_resource_templates,
        on_read_resource=dispatcher.read_resource,
        on_list_prompts=dispatcher.list_prompts,
        on_get_prompt=dispatcher.get_prompt,
    )
