"""Validation rules for entries and namespaces that depend on the server's limits."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from agent_memory.core.model.clock import OutOfRange, format_ts, parse_ts, plus_seconds
from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.models import Caller, Layer, ListFilters, Scope

NAMESPACE_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,128}(/[A-Za-z0-9._-]{1,128})*\Z")
MAX_NAMESPACE_CHARS = 256
MAX_TAGS = 32
MAX_TAG_CHARS = 128
MAX_KEY_CHARS = 256
MAX_TTL_SECONDS = 100 * 365 * 24 * 3600


@dataclass(frozen=True, slots=True)
class Limits:
    max_content_chars: int = 32_000


def resolve_namespace(caller: Caller, scope: Scope, namespace: str | None, field: str = "namespace") -> str:
    """The namespace a request addresses: agent scope defaults to the caller's home (its id, or
    `<agent_id>/<project>` in a project).

    Raises:
        InvalidParams: team/global without a namespace, or a malformed namespace.
    """
    if namespace is None or namespace == "":
        if scope is Scope.AGENT:
            return caller.home
        if scope is Scope.TEAM:
            raise InvalidParams(f"{field} is required for team scope: use your team's namespace {caller.team} "
                                f"or {caller.team}/...", field=field, suggested_namespace=caller.team)
        raise InvalidParams(f"{field} is required for global scope: any namespace, e.g. global or global/...",
                            field=field, suggested_namespace="global")
    return check_namespace(namespace, field)


def check_namespace(namespace: str, field: str = "namespace") -> str:
    """Raises: InvalidParams for an empty or malformed namespace."""
    if (
        len(namespace) > MAX_NAMESPACE_CHARS
        or not NAMESPACE_PATTERN.match(namespace)
        or any(set(segment) == {"."} for segment in namespace.split("/"))
    ):
        raise InvalidParams(
            f"{field} must be '/'-separated segments of [A-Za-z0-9._-] (not '.' or '..'), "
            f"at most {MAX_NAMESPACE_CHARS} characters, e.g. red/ops",
            field=field, pattern=NAMESPACE_PATTERN.pattern, limit=MAX_NAMESPACE_CHARS,
        )
    return namespace


def check_content(content: str, limits: Limits) -> str:
    if not content:
        raise InvalidParams(f"content must not be empty: give 1-{limits.max_content_chars} characters",
                            field="content", limit=limits.max_content_chars)
    if len(content) > limits.max_content_chars:
        raise InvalidParams(
            f"content has {len(content)} characters; the limit is {limits.max_content_chars}: shorten it or "
            "split it into several entries",
            field="content",
            limit=limits.max_content_chars,
        )
    return content


def check_tags(tags: tuple[str, ...]) -> tuple[str, ...]:
    if len(tags) > MAX_TAGS:
        raise InvalidParams(f"at most {MAX_TAGS} tags are allowed, got {len(tags)}", field="tags", limit=MAX_TAGS)
    for tag in tags:
        if not tag or len(tag) > MAX_TAG_CHARS:
            raise InvalidParams(f"each tag must have 1-{MAX_TAG_CHARS} characters, got one with {len(tag)}",
                                field="tags", limit=MAX_TAG_CHARS)
    return tuple(dict.fromkeys(tags))


def check_key(key: str | None, field: str = "key") -> str | None:
    """A key: 1-256 characters (the text rule is checked on every argument before)."""
    if key is not None and not 1 <= len(key) <= MAX_KEY_CHARS:
        raise InvalidParams(f"{field} must have 1-{MAX_KEY_CHARS} characters, got {len(key)}", field=field,
                            limit=MAX_KEY_CHARS)
    return key


def check_confidence(confidence: float) -> float:
    if not 0.0 <= confidence <= 1.0:
        raise InvalidParams("confidence must be between 0.0 and 1.0", field="confidence", minimum=0.0, maximum=1.0)
    return float(confidence)


def required_layer(scope: Scope, layer: Layer | None) -> Layer:
    """Team and global writes must name a layer; agent-scope manual writes default to long_term."""
    if layer is not None:
        return layer
    if scope is Scope.AGENT:
        return Layer.LONG_TERM
    allowed = [layer.value for layer in Layer]
    raise InvalidParams(f"layer is required for {scope.value} scope: one of {', '.join(allowed)} (on the request "
                        "or on each item; long_term for durable facts, meta for rules)", field="layer",
                        allowed=allowed)


def normalise_timestamp(value: str, field: str) -> str:
    """Raises: InvalidParams for text that is not an ISO-8601 date-time, or one outside years
    0001..9999 once converted to UTC."""
    try:
        return format_ts(parse_ts(value))
    except OutOfRange:
        raise InvalidParams(f"{field} must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z "
                            "once converted to UTC", field=field) from None
    except (ValueError, TypeError):
        raise InvalidParams(f"{field} must be an ISO-8601 date-time, e.g. 2026-01-31T09:30:00Z or 2026-01-31",
                            field=field) from None


_BARE_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def date_range(since: str | None, until: str | None) -> tuple[str | None, str | None]:
    """`since`/`until` of a retrieval as stored timestamps: since inclusive, until exclusive (a
    bare date for `until` means the end of that day). Raises: InvalidParams (bad text, empty range)."""
    start = normalise_timestamp(since, "since") if since is not None else None
    end = None
    if until is not None:
        end = normalise_timestamp(until, "until")
        if _BARE_DATE.match(until.strip()):
            try:
                end = format_ts(parse_ts(end) + timedelta(days=1))
            except (OverflowError, OutOfRange):
                end = None  # the end of 9999-12-31: no upper bound
    if start is not None and end is not None and start >= end:
        raise InvalidParams("since must be before until", field="since")
    return start, end


def expiry(now: datetime, expires_at: str | None, ttl_seconds: int | None) -> str | None:
    """Raises: InvalidParams for both given, a bad timestamp, a past expiry or a bad ttl."""
    if expires_at is not None and ttl_seconds is not None:
        raise InvalidParams("give expires_at or ttl_seconds, not both", field="ttl_seconds")
    if ttl_seconds is not None:
        if not 0 < ttl_seconds <= MAX_TTL_SECONDS:
            raise InvalidParams(f"ttl_seconds must be between 1 and {MAX_TTL_SECONDS} (100 years)",
                                field="ttl_seconds", minimum=1, maximum=MAX_TTL_SECONDS)
        return format_ts(plus_seconds(now, ttl_seconds))
    if expires_at is None:
        return None
    normalised = normalise_timestamp(expires_at, "expires_at")
    if normalised <= format_ts(now):
        raise InvalidParams(f"expires_at must be in the future (now is {format_ts(now)}); to drop an entry, delete "
                            "it", field="expires_at")
    return normalised


def normalise_filters(filters: ListFilters) -> ListFilters:
    """Canonical list filters (sorted unique tags, normalised timestamps), so that equal queries
    bind cursors equally.

    Raises:
        InvalidParams: a bad tag or timestamp.
    """
    return replace(
        filters,
        tags=check_tags(tuple(sorted(set(filters.tags)))),
        created_after=normalise_timestamp(filters.created_after, "filters.created_after")
        if filters.created_after else None,
        created_before=normalise_timestamp(filters.created_before, "filters.created_before")
        if filters.created_before else None,
    )
