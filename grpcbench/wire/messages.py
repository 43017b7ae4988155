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

from grpcbench.wire import status
from grpcbench.wire.stream import WireStream

# A compressed reply is decoded for these grpc-encoding values (zlib's wbits; None:
# not compressed at all); others end the call.
WBITS: dict[bytes, int | None] = {
    b"gzip": 16 + zlib.MAX_WBITS,
    b"deflate": zlib.MAX_WBITS,
    b"identity": None,
}
# Past the size limit an inflated message is only counted, in bounded pieces, up to
# this much more (a decompression bomb costs neither memory nor unbounded CPU).
_COUNTED_PAST_LIMIT = 64 << 20
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
            inflated = _inflate(stream, data[position + 5 : end], max_recv)
            if isinstance(inflated, tuple):  # grpc checks the inflated size too
                return inflated
            message = inflated
            length = len(message)
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


def _inflate(stream: WireStream, data: bytes, max_recv: int) -> bytes | Problem:
    """The message inflated, never past ``max_recv`` (0: no limit) in memory: a larger
    one is a problem naming its inflated size, as grpc's, or a lower bound of it."""
    encoding = stream.encoding
    if encoding not in WBITS:
        named = encoding.decode("latin-1") or "none named"
        return (
            status.INTERNAL,
            f"a compressed reply (grpc-encoding {named}) that grpcbench cannot decode",
        )
    wbits = WBITS[encoding]
    if wbits is None:
        message = data
    else:
        inflater = zlib.decompressobj(wbits)
        try:
            message = inflater.decompress(data, max_recv + 1 if max_recv else 0)
            if max_recv and len(message) > max_recv:
                return _too_large_inflated(inflater, len(message), max_recv)
        except zlib.error as error:
            return status.INTERNAL, f"a compressed reply that does not inflate: {error}"
    if max_recv and len(message) > max_recv:
        return too_large(len(message), max_recv)
    return message


def _too_large_inflated(inflater: zlib._Decompress, so_far: int, max_recv: int) -> Problem:
    """grpc's words with the whole inflated size, counted in pieces that are dropped;
    past ``_COUNTED_PAST_LIMIT`` more than the limit, "more than" that bound."""
    cap = max_recv + _COUNTED_PAST_LIMIT
    while inflater.unconsumed_tail and so_far <= cap:
        so_far += len(inflater.decompress(inflater.unconsumed_tail, 1 << 20))
    if so_far <= cap:
        return too_large(so_far, max_recv)
    code, message = too_large(cap, max_recv)
    return code, message.replace(f"({cap} vs.", f"(more than {cap} vs.")
