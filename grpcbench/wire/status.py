"""gRPC status codes as the wire carries them, and how HTTP/2 events map onto them.

The mappings are gRPC's own (PROTOCOL-HTTP2.md, http-grpc-status-mapping.md),
so a call ends with the status grpc.aio would give it.
"""

from __future__ import annotations

import math
from urllib.parse import unquote_to_bytes

from grpcbench.rpc.status_names import NAMES
from grpcbench.wire import frames

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


# RST_STREAM error code -> gRPC status (PROTOCOL-HTTP2.md, "Errors").
_RST_STATUS = {
    frames.REFUSED_STREAM: UNAVAILABLE,
    frames.CANCEL: CANCELLED,
    frames.ENHANCE_YOUR_CALM: RESOURCE_EXHAUSTED,
    frames.INADEQUATE_SECURITY: PERMISSION_DENIED,
}

# HTTP status of a reply without grpc-status -> gRPC status (http-grpc-status-mapping.md).
_HTTP_STATUS = {
    400: INTERNAL,
    401: UNAUTHENTICATED,
    403: PERMISSION_DENIED,
    404: UNIMPLEMENTED,
    429: UNAVAILABLE,
    502: UNAVAILABLE,
    503: UNAVAILABLE,
    504: UNAVAILABLE,
}


def name(code: int) -> str:
    """A code's recorded name; codes outside gRPC's 0-16 are Unknown, as grpc reads them."""
    return NAMES[code] if 0 <= code < len(NAMES) else "Unknown"


def from_rst_stream(error_code: int) -> int:
    return _RST_STATUS.get(error_code, INTERNAL)


def from_http_status(http_status: int) -> int:
    return _HTTP_STATUS.get(http_status, UNKNOWN)


def parse_status(value: bytes) -> int:
    """grpc-status's value, as grpc core reads it: a code it does not know is Unknown;
    a value that is not a 32-bit unsigned number (abc, empty, -3, 2^32) is Internal."""
    if value.isdigit() and int(value) < 2**32:  # bytes: ASCII digits only
        code = int(value)
        return code if code < len(NAMES) else UNKNOWN
    return INTERNAL


def decode_message(value: bytes) -> str:
    """grpc-message is percent-encoded UTF-8. A message that is not UTF-8 once decoded
    is read as Latin-1, whole, as grpc's Python API reads it (``grpc._common.decode``),
    so both client stacks count the same error under the same text."""
    if b"%" in value:
        value = unquote_to_bytes(value)
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


def encode_timeout(timeout_s: float) -> str:
    """grpc-timeout: at most 8 digits and a unit; rounded up, never to 0 (PROTOCOL-HTTP2.md)."""
    for unit, per_second in (("u", 1_000_000), ("m", 1_000), ("S", 1), ("M", 1 / 60)):
        value = max(1, math.ceil(timeout_s * per_second))
        if value < 100_000_000:
            return f"{value}{unit}"
    return f"{min(99_999_999, math.ceil(timeout_s / 3600))}H"
