"""UTC timestamps as sortable ISO-8601 strings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class OutOfRange(ValueError):
    """A valid date-time that is not between 0001-01-01 and 9999-12-31 once converted to UTC."""


def format_ts(moment: datetime) -> str:
    """Normalise an aware (or naive, taken as UTC) datetime to `YYYY-MM-DDTHH:MM:SS.ffffffZ`.

    The year always has four digits (strftime's `%Y` writes year 999 as `999`, which would sort
    after `2024`), so these strings sort in time order.

    Raises:
        OutOfRange: the moment falls outside years 1..9999 in UTC.
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        m = moment.astimezone(UTC)
    except OverflowError:
        raise OutOfRange("date-time is outside 0001-01-01..9999-12-31 UTC") from None
    return (f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
            f".{m.microsecond:06d}Z")


def parse_ts(text: str) -> datetime:
    """Parse ISO-8601 (`Z` or an offset; naive means UTC).

    Raises:
        ValueError: the text is not an ISO-8601 date-time (OutOfRange: one outside years 1..9999
            once converted to UTC).
    """
    moment = datetime.fromisoformat(text.replace("z", "Z"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise OutOfRange("date-time is outside 0001-01-01..9999-12-31 UTC") from None


def utc_now() -> datetime:
    return datetime.now(UTC)


def plus_seconds(moment: datetime, seconds: float) -> datetime:
    """Raises: OutOfRange past year 9999."""
    try:
        return moment + timedelta(seconds=seconds)
    except OverflowError:
        raise OutOfRange("date-time is past 9999-12-31 UTC") from None
