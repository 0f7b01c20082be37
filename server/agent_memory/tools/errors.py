"""The single point where failures become `{code, message, details}`."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError

from agent_memory.core.errors import DomainError, InvalidParams
from agent_memory.tools.contracts import ErrorInfo

ModelT = TypeVar("ModelT", bound=BaseModel)


def to_error_info(error: DomainError) -> ErrorInfo:
    return ErrorInfo(code=error.code, message=error.message, details=dict(error.details))  # type: ignore[arg-type]


def internal_error(request_id: str) -> ErrorInfo:
    """What the client sees of an unexpected failure: a request id to quote, nothing internal."""
    return ErrorInfo(
        code="INTERNAL",
        message=f"internal error; quote request id {request_id} to the operator",
        details={"request_id": request_id},
    )


def invalid_params(exc: ValidationError, prefix: str = "") -> InvalidParams:
    """Turn a pydantic error into INVALID_PARAMS naming the first offending field (never echoing
    the rejected value)."""
    first = exc.errors()[0]
    path = _field_path(first["loc"], prefix)
    if first["type"] == "extra_forbidden":
        message = f"unknown field {path}"
    elif first["type"] == "missing":
        message = f"{path} is required"
    else:
        message = f"{path}: {first['msg']}"
    return InvalidParams(message, field=path)


def _field_path(loc: tuple[int | str, ...], prefix: str) -> str:
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path or "arguments"


def parse_model(model: type[ModelT], data: object, prefix: str = "") -> ModelT:
    """Raises: InvalidParams naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid_params(exc, prefix) from None
