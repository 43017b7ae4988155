"""gRPC messages out of a stream's DATA: 5-byte prefix (compressed flag, length), body.

A message may span many DATA frames (an 8 MB reply is 512 frames of 16 KB). Its
pieces are kept as a list and joined once, when the last one arrives, so every
byte is copied a constant number of times: appending each frame to the bytes so
far copied them again per frame, quadratic in the message's size (a 4 MB reply
cost 41 ms of client CPU, grpc.aio 6 ms). A reply that fits in one frame, the
common case, is cut straight from that frame's payload.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from grpcbench.wire import status
from grpcbench.wire.stream import WireStream

# A compressed reply is decoded for these grpc-encoding values; others end the call.
DECOMPRESS: dict[bytes, Callable[[bytes], bytes]] = {
    b"gzip": lambda data: zlib.decompress(data, 16 + zlib.MAX_WBITS),
    b"deflate": zlib.decompress,
    b"identity": lambda data: data,
}
Problem = tuple[int, str]  # a status and message that end the call


def take(stream: WireStream, payload: bytes) -> bytes | None:
    """The bytes to cut messages from now: ``payload``, or a held message's pieces with
    it once the message is whole; None while it is not."""
    if not stream.have:
        return payload
    stream.parts.append(payload)
    stream.have += len(payload)
    if stream.wanted and stream.have < stream.wanted:
        return None
    data = b"".join(stream.parts)
    stream.parts = []
    stream.have = stream.wanted = 0
    return data


def read(stream: WireStream, data: bytes, max_recv: int, now: float) -> Problem | None:
    """Deliver every whole message in ``data`` and keep the rest (``take`` adds to it);
    a problem that must end the call (too large, cannot inflate), or None. ``now``:
    when the socket read that brought ``data`` came in (perf_counter)."""
    position = 0
    size = len(data)
    on_message = stream.on_message
    arrived = 0  # messages completed by this frame
    while size - position >= 5:
        length = int.from_bytes(data[position + 1 : position + 5], "big")
        if max_recv and length > max_recv:  # --max-recv-message-size
            return too_large(length, max_recv)
        end = position + 5 + length
        if end > size:
            break
        if data[position]:
            inflated = _inflate(stream, data[position + 5 : end])
            if isinstance(inflated, tuple):
                return inflated
            message = inflated
            length = len(message)
            if max_recv and length > max_recv:  # grpc checks the inflated size too
                return too_large(length, max_recv)
        else:
            message = data[position + 5 : end] if on_message is not None else b""
        arrived += 1
        stream.messages += 1
        stream.bytes += length
        if on_message is not None:
            on_message(message)
        position = end
    if arrived:
        timed(stream, arrived, now)
    if position < size:  # the start of a message still arriving
        rest = data[position:]
        stream.parts = [rest]
        stream.have = len(rest)
        stream.wanted = 5 + int.from_bytes(rest[1:5], "big") if len(rest) >= 5 else 0
    return None


def timed(stream: WireStream, arrived: int, now: float) -> None:
    """``arrived`` messages just counted on ``stream`` (in ``messages``), all of one
    socket read that came in at ``now``: when the stream's first came, or the gap
    since the last read's; the others of a read came together with its first."""
    if stream.messages == arrived:  # the stream's first messages
        stream.first_at = now
        stream.together += arrived - 1
    elif now == stream.last_at:  # the same socket read as the stream's last ones
        stream.together += arrived
    else:
        gap(stream, now)
        stream.together += arrived - 1
    stream.last_at = now


def gap(stream: WireStream, now: float) -> None:
    """A socket read that completed messages after the stream's first: the gap since
    the last such read's (the others of this read arrived with its first)."""
    gap_us = int((now - stream.last_at) * 1e6)
    if stream.gaps_us is None:
        stream.gaps_us = [gap_us]
    else:
        stream.gaps_us.append(gap_us)


def too_large(length: int, max_recv: int) -> Problem:
    """grpc's own status and words for a reply over --max-recv-message-size (grpc
    1.85's text, so the two client stacks' error tables match)."""
    return (
        status.RESOURCE_EXHAUSTED,
        f"Stream removed (CLIENT: Received message larger than max ({length} vs. {max_recv}))",
    )


def _inflate(stream: WireStream, data: bytes) -> bytes | Problem:
    decompress = DECOMPRESS.get(stream.encoding)
    if decompress is None:
        encoding = stream.encoding.decode("latin-1") or "none named"
        return (
            status.INTERNAL,
            f"a compressed reply (grpc-encoding {encoding}) that grpcbench cannot decode",
        )
    try:
        return decompress(data)
    except zlib.error as error:
        return status.INTERNAL, f"a compressed reply that does not inflate: {error}"
