"""Go's time formats, as ghz writes and reads them: RFC3339 and RFC3339Nano.

Formatting (grpcbench writing ghz's reports) and parsing (grpcbench reading ghz's
per-call records) live together, so the two directions stay each other's inverse.
"""

from __future__ import annotations

from datetime import UTC, datetime


def rfc3339(iso: str) -> str:
    """An ISO time as Go's time.RFC3339 (to the second), in UTC with "Z"."""
    return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_nano(epoch_ns: int) -> str:
    """Epoch nanoseconds as Go's RFC3339Nano (trailing zeros of the fraction dropped)."""
    seconds, nanos = divmod(epoch_ns, 1_000_000_000)
    text = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return text + (f".{nanos:09d}".rstrip("0") if nanos else "") + "Z"


def epoch_ns(iso: str) -> int:
    moment = datetime.fromisoformat(iso)
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def parse_rfc3339_nano(stamp: str) -> int:
    """Go's RFC3339Nano ("2026-11-25T14:21:27.210090253Z") as Unix epoch nanoseconds."""
    whole, _, fraction = stamp.removesuffix("Z").partition(".")
    zone = "+00:00" if stamp.endswith("Z") else ""
    if not zone and len(fraction) > 6:  # an offset follows the fraction: "…123+02:00"
        fraction, zone = fraction[:-6], fraction[-6:]
    seconds = int(datetime.fromisoformat(whole + zone).timestamp())
    return seconds * 1_000_000_000 + int((fraction or "0").ljust(9, "0")[:9])
