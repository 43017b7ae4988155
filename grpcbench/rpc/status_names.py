"""gRPC status codes as grpcbench records them (``DEADLINE_EXCEEDED`` -> ``DeadlineExceeded``)."""

from __future__ import annotations

import grpc

from grpcbench.base.errors import UsageError


def status_name(code: grpc.StatusCode) -> str:
    """``DEADLINE_EXCEEDED`` -> ``DeadlineExceeded``, as ghz and the seed print them."""
    if code is grpc.StatusCode.OK:
        return "OK"
    return "".join(part.title() for part in code.name.split("_"))


def parse_statuses(text: str, option: str = "--expect-status") -> tuple[str, ...]:
    """ "Unavailable,NOT_FOUND,5" -> ("Unavailable", "NotFound", "NotFound"...) deduplicated:
    names as grpcbench records them, in any case, with or without underscores, or numbers."""
    by_key: dict[str, str] = {}
    for code in grpc.StatusCode:
        name = status_name(code)
        by_key[name.lower()] = name
        by_key[str(code.value[0])] = name
    chosen: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        found = by_key.get(item.replace("_", "").lower())
        if found is None:
            listed = ", ".join(status_name(code) for code in grpc.StatusCode)
            raise UsageError(f"bad {option} {item!r}: a gRPC status name or number ({listed})")
        if found not in chosen:
            chosen.append(found)
    return tuple(chosen)
