"""gRPC status codes as grpcbench records them (``DEADLINE_EXCEEDED`` -> ``DeadlineExceeded``)."""

from __future__ import annotations

import grpc


def status_name(code: grpc.StatusCode) -> str:
    """``DEADLINE_EXCEEDED`` -> ``DeadlineExceeded``, as ghz and the seed print them."""
    if code is grpc.StatusCode.OK:
        return "OK"
    return "".join(part.title() for part in code.name.split("_"))
