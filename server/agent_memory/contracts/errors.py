"""The single point where failures become `{code, message, details}`."""

from __future__ import annotations

import re
from typing import TypeVar

import structlog
from pydantic import BaseModel, ValidationError

from agent_memory.contracts.crud import ErrorInfo
from agent_memory.contracts.validation_hints import explain
from agent_memory.core.model.errors import DomainError, InvalidParams
from agent_memory.core.model.text import check_text, field_path, storable
from agent_memory.core.ports.failures import EXPLANATIONS, FailureReader

ModelT = TypeVar("ModelT", bound=BaseModel)

MAX_ARGUMENT_DEPTH = 32
_SURROGATE = re.compile("[\ud800-\udfff]")

log = structlog.get_logger("agent_memory.tools")


def to_error_info(error: DomainError) -> ErrorInfo:
    return ErrorInfo(code=error.code, message=error.message, details=dict(error.details))  # type: ignore[arg-type]


def internal_error(request_id: str) -> ErrorInfo:
    """What the client sees of an unexpected failure: a request id to quote, nothing internal."""
    return ErrorInfo(
        code="INTERNAL",
        message=f"internal error; quote request id {request_id} to the operator",
        details={"request_id": request_id},
    )


def storage_failure(exc: BaseException, request_id: str, failures: FailureReader) -> DomainError | None:
    """Storage that refused the work for a reason the operator can fix (a full disk; a database
    held busy by another process past busy_timeout), as `failures` (the store's) tells: `INTERNAL`
    with a plain message and `details.reason` (`storage_full`, `storage_busy`), logged at ERROR
    without a traceback. None for anything else (a plain `INTERNAL`)."""
    reason = failures.reason(exc)
    if reason is None:
        return None
    log.error("storage_failed", reason=reason, error=type(exc).__name__, detail=failures.detail(exc),
              request_id=request_id)
    return DomainError(f"{EXPLANATIONS[reason]} (request id {request_id})", reason=reason, request_id=request_id)


def invalid_params(exc: ValidationError, prefix: str = "", model: type[BaseModel] | None = None) -> InvalidParams:
    """Turn a pydantic error into INVALID_PARAMS naming the first offending field and how to fix
    it (allowed values, bounds, the fields that exist: `details.allowed`, `minimum`/`maximum`,
    `limit`), never echoing the rejected value."""
    first = exc.errors()[0]
    path = _field_path(first["loc"], prefix)
    message, hints = explain(first, path, model)
    return InvalidParams(message, field=path, **hints)


def _field_path(loc: tuple[int | str, ...], prefix: str) -> str:
    return field_path(loc, prefix)


def has_lone_surrogate(text: str) -> bool:
    """Text holding U+D800..U+DFFF alone: it cannot be written as UTF-8 (stored, logged, answered)."""
    return _SURROGATE.search(text) is not None


def writable(text: str) -> str:
    """`text` with NUL and lone surrogates escaped, so it can be written anywhere (a log line, a
    message, an audit row)."""
    return storable(text)


def check_unicode(data: object, prefix: str = "") -> None:
    """The text rule (core/model/text.py) on a client's input: no NUL, no lone surrogate, in keys or
    values, at any depth. JSON transports already refuse lone surrogates, but an in-process client
    can send them, and a NUL is valid JSON that PostgreSQL cannot store.

    Raises:
        InvalidParams: naming the first field that holds such text.
    """
    check_depth(data, prefix)
    check_text(data, prefix)


def check_depth(data: object, prefix: str = "") -> None:
    """Refuse arguments nested deeper than MAX_ARGUMENT_DEPTH arrays and objects (no tool takes
    more than a few levels; the transports cut what nests past their parsers' limits down to
    just over this, so such a request still gets this answer, not a protocol error).

    Raises:
        InvalidParams: naming the field where the nesting passes the limit.
    """
    stack: list[tuple[object, tuple[int | str, ...]]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if isinstance(value, dict | list | tuple) and len(loc) >= MAX_ARGUMENT_DEPTH:
            named = max((i for i, part in enumerate(loc) if isinstance(part, str)), default=-1)
            path = _field_path(loc[:named + 1], prefix)  # the field, not its 32 indexes
            raise InvalidParams(f"{path} nests arrays or objects deeper than {MAX_ARGUMENT_DEPTH} levels",
                                field=path, limit=MAX_ARGUMENT_DEPTH)
        if isinstance(value, dict):
            stack.extend((child, (*loc, key)) for key, child in value.items())
        elif isinstance(value, list | tuple):
            stack.extend((child, (*loc, index)) for index, child in enumerate(value))


def parse_model(model: type[ModelT], data: object, prefix: str = "") -> ModelT:
    """Raises: InvalidParams naming the field."""
    check_unicode(data, prefix)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid_params(exc, prefix, model) from None
