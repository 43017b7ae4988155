"""gRPC status codes as grpcbench records them (``DEADLINE_EXCEEDED`` -> ``DeadlineExceeded``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grpcbench.base.errors import UsageError

if TYPE_CHECKING:  # options are parsed before anything needs grpc itself
    import grpc

# The names grpcbench records, by code (0-16): the wire transport's too (``wire.status``).
NAMES: tuple[str, ...] = (
    "OK", "Cancelled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
    "AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
    "Aborted", "OutOfRange", "Unimplemented", "Internal", "Unavailable", "DataLoss",
    "Unauthenticated",
)  # fmt: skip


def status_name(code: grpc.StatusCode) -> str:
    """``DEADLINE_EXCEEDED`` -> ``DeadlineExceeded``, as ghz and the seed print them."""
    number: int = code.value[0]
    return NAMES[number]


def parse_statuses(text: str, option: str = "--expect-status") -> tuple[str, ...]:
    """ "Unavailable,NOT_FOUND,5" -> ("Unavailable", "NotFound", "NotFound"...) deduplicated:
    names as grpcbench records them, in any case, with or without underscores, or numbers."""
    by_key: dict[str, str] = {}
    for number, name in enumerate(NAMES):
        by_key[name.lower()] = name
        by_key[str(number)] = name
    chosen: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        found = by_key.get(item.replace("_", "").lower())
        if found is None:
            listed = ", ".join(NAMES)
            raise UsageError(f"bad {option} {item!r}: a gRPC status name or number ({listed})")
        if found not in chosen:
            chosen.append(found)
    return tuple(chosen)
