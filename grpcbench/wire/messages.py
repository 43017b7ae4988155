"""gRPC messages out of a stream's DATA: 5-byte prefix (compressed flag, length), body.

A message may span many DATA frames (an 8 MB reply is 512 frames of 16 KB). A
message that is only counted (no ``on_message``: the callback loops, ``--call``'s
server streams) is never held: its pieces are counted as they pass. A delivered
one is kept as its pieces and joined once, when the last one arrives, without its
prefix, so its bytes are copied once: appending each frame to the bytes so far was
quadratic in the message's size (a 4 MB reply cost 41 ms of client CPU, grpc.aio
6 ms), and joining with the prefix then cutting it off copied the message twice
and faulted fresh heap in for both (issue 52). A reply that fits in one frame,
the common case, is cut straight from that frame's payload.
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


def received(stream: WireStream, payload: bytes, max_recv: int, now: float) -> Problem | None:
    """A DATA payload of ``stream``: every message it completes delivered (or counted),
    the start of the next one kept; a problem that must end the call, or None. ``now``:
    when the socket read that brought it came in (perf_counter)."""
    if not stream.have:
        return read(stream, payload, max_recv, now)
    have = stream.have + len(payload)
    wanted = stream.wanted
    if wanted and have < wanted:  # the held message is not whole yet
        stream.have = have
        if not stream.counting:
            stream.parts.append(payload)
        return None
    over = have - wanted  # bytes of the next messages at the end of this payload
    if stream.counting:  # whole: counted, never held
        _reset(stream)
        _arrived(stream, wanted - 5, now)
        return read(stream, payload[len(payload) - over :], max_recv, now) if over else None
    parts = stream.parts
    parts.append(payload)
    if wanted and not over and not parts[0][0]:  # exactly one plain message: join it once
        parts[0] = parts[0][5:]
        message = b"".join(parts)
        _reset(stream)
        _arrived(stream, wanted - 5, now)
        if stream.on_message is not None:
            stream.on_message(message)
        return None
    data = b"".join(parts)  # a prefix split across frames, or compressed: read it whole
    _reset(stream)
    return read(stream, data, max_recv, now)


def _reset(stream: WireStream) -> None:
    stream.parts = []
    stream.have = stream.wanted = 0
    stream.counting = False


def _arrived(stream: WireStream, length: int, now: float) -> None:
    """One message of ``length`` bytes just completed on ``stream``."""
    stream.messages += 1
    stream.bytes += length
    timed(stream, 1, now)


def read(stream: WireStream, data: bytes, max_recv: int, now: float) -> Problem | None:
    """Deliver every whole message in ``data`` and keep the rest (``received`` adds to
    it); a problem that must end the call (too large, cannot inflate), or None."""
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
        stream.have = size - position
        if size - position < 5:
            stream.parts = [data[position:]]
            stream.wanted = 0
        else:
            stream.wanted = 5 + int.from_bytes(data[position + 1 : position + 5], "big")
            if on_message is None and not data[position]:  # only counted: never held
                stream.counting = True
            else:
                stream.parts = [data[position:]]
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
