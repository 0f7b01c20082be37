"""The single point where failures become `{code, message, details}`."""

from __future__ import annotations

import re
from typing import TypeVar

import structlog
from pydantic import BaseModel, ValidationError

from agent_memory.core.errors import DomainError, InvalidParams
from agent_memory.storage.failures import EXPLANATIONS, failure_detail, storage_reason
from agent_memory.tools.contracts import ErrorInfo
from agent_memory.tools.validation_hints import explain

ModelT = TypeVar("ModelT", bound=BaseModel)

MAX_FIELD_NAME_CHARS = 64
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


def storage_failure(exc: BaseException, request_id: str) -> DomainError | None:
    """Storage that refused the work for a reason the operator can fix (a full disk; a database
    held busy by another process past busy_timeout): `INTERNAL` with a plain message and
    `details.reason` (`storage_full`, `storage_busy`), logged at ERROR without a traceback. None
    for anything else (a plain `INTERNAL`)."""
    reason = storage_reason(exc)
    if reason is None:
        return None
    log.error("storage_failed", reason=reason, error=type(exc).__name__, detail=failure_detail(exc),
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
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            name = _field_name(str(part))
            path = f"{path}.{name}" if path else name
    return path or "arguments"


def has_lone_surrogate(text: str) -> bool:
    """Text holding U+D800..U+DFFF alone: it cannot be written as UTF-8 (stored, logged, answered)."""
    return _SURROGATE.search(text) is not None


def writable(text: str) -> str:
    """`text` with lone surrogates escaped, so it can be written as UTF-8 (a log line, a message)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") if has_lone_surrogate(text) else text


def _field_name(name: str) -> str:
    """A client-chosen key as it may appear in a message: surrogates escaped, cut to
    MAX_FIELD_NAME_CHARS."""
    if len(name) > MAX_FIELD_NAME_CHARS:
        name = name[:MAX_FIELD_NAME_CHARS] + "..."
    return writable(name)


def check_unicode(data: object, prefix: str = "") -> None:
    """Refuse text holding a lone surrogate (U+D800..U+DFFF), in keys or values, at any depth.

    JSON transports already refuse such text, but an in-process client can send it, and it cannot
    be stored (SQLite and Chroma take UTF-8), logged or answered.

    Raises:
        InvalidParams: naming the first field that holds one.
    """
    stack: list[tuple[object, tuple[int | str, ...]]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if isinstance(value, str):
            if has_lone_surrogate(value):
                path = _field_path(loc, prefix)
                raise InvalidParams(f"{path} holds a lone surrogate (text must be valid Unicode)", field=path)
        elif isinstance(value, dict):
            for key, child in reversed(list(value.items())):
                if isinstance(key, str) and has_lone_surrogate(key):
                    path = _field_path((*loc, key), prefix)
                    raise InvalidParams(f"field name {path} holds a lone surrogate", field=path)
                stack.append((child, (*loc, key)))
        elif isinstance(value, list | tuple):
            stack.extend((child, (*loc, index)) for index, child in reversed(list(enumerate(value))))


def parse_model(model: type[ModelT], data: object, prefix: str = "") -> ModelT:
    """Raises: InvalidParams naming the field."""
    check_unicode(data, prefix)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid_params(exc, prefix, model) from None
