"""A run's start as the store keeps it: an instant, written in UTC in one shape.

Results files carry their own ``started_at`` (ISO 8601, any offset: a file from
another machine, an upload). The store orders runs by it, so it keeps one text per
instant, which sorts as the instants do."""

from __future__ import annotations

from datetime import UTC, datetime


def instant(started_at: str) -> datetime:
    """A start as an instant (a time without an offset is UTC's); ValueError if it is
    not an ISO 8601 time."""
    try:
        moment = datetime.fromisoformat(started_at)
    except ValueError:
        raise ValueError(f"started_at {started_at[:40]!r} is not an ISO 8601 time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def utc_text(started_at: str) -> str:
    """The one text of a start's instant: UTC, to the millisecond."""
    return instant(started_at).astimezone(UTC).isoformat(timespec="milliseconds")
