"""UTC timestamps as sortable ISO-8601 strings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def format_ts(moment: datetime) -> str:
    """Normalise an aware (or naive, taken as UTC) datetime to `YYYY-MM-DDTHH:MM:SS.ffffffZ`."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(_FORMAT)


def parse_ts(text: str) -> datetime:
    """Parse ISO-8601 (`Z` or an offset; naive means UTC).

    Raises:
        ValueError: the text is not an ISO-8601 date-time.
    """
    moment = datetime.fromisoformat(text.replace("z", "Z"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def utc_now() -> datetime:
    return datetime.now(UTC)


def plus_seconds(moment: datetime, seconds: float) -> datetime:
    return moment + timedelta(seconds=seconds)
