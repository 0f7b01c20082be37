"""Domain errors with stable codes; the MCP layer maps them to `{code, message, details}`."""

from __future__ import annotations

from typing import Any, ClassVar


class DomainError(Exception):
    """An anticipated failure the caller can act on. Its message is safe to show."""

    code: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details


class InvalidParams(DomainError):
    code = "INVALID_PARAMS"


class Forbidden(DomainError):
    code = "FORBIDDEN"


class NotFound(DomainError):
    code = "NOT_FOUND"


class Conflict(DomainError):
    code = "CONFLICT"


class RateLimited(DomainError):
    code = "RATE_LIMITED"


class NotImplementedByBackend(DomainError):
    code = "NOT_IMPLEMENTED"


def item_error(error: DomainError, index: int) -> DomainError:
    """Attach the item's position in a bulk request to its error."""
    error.details["index"] = index
    return error


ERROR_CODES: tuple[str, ...] = (
    "INVALID_PARAMS",
    "FORBIDDEN",
    "NOT_FOUND",
    "CONFLICT",
    "RATE_LIMITED",
    "NOT_IMPLEMENTED",
    "INTERNAL",
)
