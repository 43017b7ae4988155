"""The rest of a unary call's reply, whole in one read: its message and OK trailers at once.

A unary call's reply is three frames (HEADERS, one DATA frame holding the one
message, the trailers), and a server writes them together, so they nearly always
come in one socket read. Once the frame loop has taken the reply headers (its inline
case), the DATA frame and the trailers after them are taken here with one ``unpack``
of a layout learned from the first such reply (``ReplyTail``: the DATA frame's and
the trailer block's lengths), instead of two more turns of the frame loop: about a
sixth of the instructions a unary call cost the client (50,755 to 42,000: ``nox -s
loadgen``).

The outcome is exactly the frame loop's: this is taken only where both its inline
cases would be (a DATA frame with no flags, holding one whole uncompressed message
within the size limit, and within both windows' credit; a cached plain OK trailer
block on a stream whose request is whole), and nothing else is read here. Anything
else, or bytes that are not exactly that layout, returns -1 and the frame loop reads
the frames one by one. tests/test_wire_fast_paths.py holds the two to the same
outcomes however the bytes are cut.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from grpcbench.wire import frames
from grpcbench.wire.flow_control import CREDIT_AT, STREAM_CREDIT_AT
from grpcbench.wire.stream import HALF_CLOSED_LOCAL, WireStream

if TYPE_CHECKING:
    from grpcbench.wire.connection_core import ConnectionCore

_TRAILERS_FLAGS = frames.END_STREAM | frames.END_HEADERS
_MAX_FRAME = frames.DEFAULT_MAX_FRAME_SIZE  # what we advertise
_KEPT = 64  # layouts kept, by lengths (replies of a few sizes each reuse theirs)


class ReplyTail:
    """The layout of a DATA frame of ``length`` bytes (a message of ``length - 5``)
    followed by trailers of ``block`` bytes: what one ``unpack`` cuts, and the bytes
    its frame headers and message prefix must be."""

    __slots__ = ("unpack", "size", "length", "message", "data_head", "prefix", "trailers_head")

    def __init__(self, length: int, block: int) -> None:
        # DATA's length, type and flags; its stream id; the message prefix; the message
        # (skipped: counted, never copied); the trailers' length, type and flags; their
        # stream id; their block.
        layout = struct.Struct(f">5sL5s{length - 5}x5sL{block}s")
        self.unpack = layout.unpack_from
        self.size = layout.size
        self.length = length
        self.message = length - 5
        self.data_head = length.to_bytes(3, "big") + bytes([frames.DATA, 0])
        self.prefix = b"\x00" + self.message.to_bytes(4, "big")
        self.trailers_head = block.to_bytes(3, "big") + bytes([frames.HEADERS, _TRAILERS_FLAGS])


_TAILS: dict[tuple[int, int], ReplyTail] = {}


def learn(data: bytes, position: int, size: int, stream_id: int) -> ReplyTail | None:
    """The layout of the frames at ``position`` if they are a DATA frame of stream
    ``stream_id`` with no flags, then its trailers, both whole and within our frame
    size; else None."""
    header = frames.HEADER_SIZE
    if size - position < 2 * header + 5:
        return None
    high, low, kind, flags, found = frames.FRAME_HEADER.unpack_from(data, position)
    length = (high << 16) | low
    if kind != frames.DATA or flags or found != stream_id or not 5 <= length <= _MAX_FRAME:
        return None
    at = position + header + length
    if size - at < header:
        return None
    high, low, kind, flags, found = frames.FRAME_HEADER.unpack_from(data, at)
    block = (high << 16) | low
    if kind != frames.HEADERS or flags != _TRAILERS_FLAGS or found != stream_id:
        return None
    if block > _MAX_FRAME or at + header + block > size:
        return None
    tail = _TAILS.get((length, block))
    if tail is None:
        if len(_TAILS) >= _KEPT:
            _TAILS.clear()
        tail = _TAILS[length, block] = ReplyTail(length, block)
    return tail


def take_unary_reply(
    connection: ConnectionCore,
    stream: WireStream,
    stream_id: int,
    data: bytes,
    position: int,
    size: int,
    now: float,
    largest: int,
) -> int:
    """Take the DATA frame and OK trailers at ``position`` that end ``stream``'s reply
    (its headers just taken), as the frame loop would: the message counted, the
    trailers in ``stream.trailing_metadata``, for the frame loop to end the call with
    (its OK trailers' case); ``largest``: the largest reply message taken. Returns
    where the frames after them begin; -1: they are anything else (nothing was taken)."""
    tail = connection.reply_tail
    if tail is None or size - position < tail.size:
        tail = learn(data, position, size, stream_id)
        if tail is None:
            return -1
        connection.reply_tail = tail
    data_head, data_id, prefix, trailers_head, trailers_id, block = tail.unpack(data, position)
    if data_head != tail.data_head or prefix != tail.prefix or trailers_head != tail.trailers_head:
        tail = learn(data, position, size, stream_id)  # replies of another size
        if tail is None:
            return -1
        connection.reply_tail = tail
        data_head, data_id, prefix, trailers_head, trailers_id, block = tail.unpack(data, position)
        if prefix != tail.prefix:  # compressed, or more or less than one message
            return -1
    trailers = connection.decoder.cache.get(block)
    length = tail.length
    received = connection.recv_used + length
    credit = stream.recv_used + length
    if (
        data_id != stream_id
        or trailers_id != stream_id
        or trailers is None
        or not trailers.plain_ok
        or stream.on_message is not None
        or stream.state != HALF_CLOSED_LOCAL
        or connection.blocked
        or received >= CREDIT_AT
        or credit >= STREAM_CREDIT_AT
        or tail.message > largest
    ):
        return -1
    # the frame loop's DATA case: both windows' use, the message counted and timed (the
    # first: its headers came just now, and DATA before them ends a stream)
    connection.recv_used = received
    stream.recv_used = credit
    stream.bytes += tail.message
    stream.messages = 1
    stream.first_at = stream.last_at = now
    stream.together = 0
    stream.trailing_metadata = trailers
    return position + tail.size
