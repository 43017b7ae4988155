"""One HTTP/2 client connection carrying gRPC calls, as an asyncio ``Protocol``.

Everything is a callback: a call is a ``WireStream`` whose ``on_done`` runs
once, with ``status`` and ``message`` set, when the call ends for any reason
(trailers, RST_STREAM, GOAWAY, deadline, connection loss). No coroutine,
task or timer exists per call, which is what makes the transport cheap.

The common frames (plain reply headers, OK trailers that end a whole call, a DATA
frame of one whole counted message, a PING to answer, the connection's WINDOW_UPDATE)
are handled inline in ``data_received``'s loop, and after a unary reply's headers its
DATA frame and trailers are read at once when the read holds them
(``unary_replies``); every other case takes the general path (``replies_in``,
``control_in``), and tests/test_wire_fast_paths.py holds them all to the same
outcomes. A unary request sent again on a connection is its kept frames with a new
stream id (``headers.RequestFrames``).

The class is put together from one class per concern, all acting on the state in
``connection_core``: ``calls_out`` (calls sent, queued and cancelled), ``replies_in``
(reply frames), ``control_in`` (control frames, draining); this module keeps the
socket's callbacks, the frame loop and teardown. Each other concern has its own
module too, as h2 keeps them:
- ``stream``: a call's state machine (IDLE, OPEN, HALF_CLOSED_LOCAL, CLOSED);
- ``control``: the control frames' checks and parsing;
- ``flow_control``: both directions' windows, and the streams waiting for window;
- ``deadlines``: one timer per connection, due at the earliest deadline;
- ``keepalive``: throttled PINGs (gRFC A8);
- ``messages``: reply messages cut from DATA (joined once when they span frames);
- ``header_blocks``: CONTINUATION in and out;
- ``writer``: frames flushed at the end of each loop iteration, or once 8 are queued.

MAX_CONCURRENT_STREAMS: calls beyond it wait in ``pending`` in order. GOAWAY:
calls the server did not process (ids above its last-stream-id, and the pending
ones) go back to the channel to be sent on a new connection (once; then
Unavailable), so none is lost; stream-id exhaustion does the same.

Statuses follow gRPC's PROTOCOL-HTTP2.md: RST_STREAM codes and HTTP statuses are
mapped as grpc maps them (``status``); a connection the peer breaks ends every call
on it with Unavailable and the reason.
"""

from __future__ import annotations

import asyncio
import struct
import time

from grpcbench.wire import frames, messages, status
from grpcbench.wire.calls_out import CallsOut
from grpcbench.wire.control_in import ControlIn
from grpcbench.wire.flow_control import (
    CONNECTION_WINDOW,
    CREDIT_AT,
    STREAM_CREDIT_AT,
    STREAM_WINDOW,
)
from grpcbench.wire.frames import ConnectionError_
from grpcbench.wire.header_blocks import PLAIN_HEADERS_MASK
from grpcbench.wire.headers import MAX_HEADER_LIST_SIZE
from grpcbench.wire.replies_in import RepliesIn, http_error
from grpcbench.wire.stream import (
    CLOSED,
    HALF_CLOSED_LOCAL,
    finish,
)
from grpcbench.wire.unary_replies import take_unary_reply

__all__ = ["CONNECTION_WINDOW", "STREAM_WINDOW", "Connection", "http_error"]

# DATA flags that take the general path (``replies_in``): padding, and the end
# of the reply (its stream then ends without trailers).
_DATA_FLAGS_ELSEWHERE = frames.PADDED | frames.END_STREAM
# Read for every frame, so module globals rather than attributes of ``frames``.
_FRAME_HEADER = frames.FRAME_HEADER
_HEADER_SIZE = frames.HEADER_SIZE
_MAX_FRAME = frames.DEFAULT_MAX_FRAME_SIZE  # what we advertise
_DATA = frames.DATA
_MESSAGE_PREFIX = struct.Struct(">BL")  # a gRPC message's compressed flag and length
# A DATA frame's header and the message prefix that starts its payload, as 4 words:
# length and type; flags and the stream id's first 3 bytes; the id's last byte and
# the compressed flag; the message's length.
_DATA_HEAD = struct.Struct(">LLHL")
_DATA_HEAD_SIZE = _DATA_HEAD.size
# Bound once here: binding them in the frame loop made three method objects per read,
# which is per call when each of 1,000 connections carries one.
_UNPACK_FRAME_HEADER = _FRAME_HEADER.unpack_from
_UNPACK_MESSAGE_PREFIX = _MESSAGE_PREFIX.unpack_from
_UNPACK_DATA_HEAD = _DATA_HEAD.unpack_from
_NO_LIMIT = 1 << 32  # a message's length is 32 bits
_PING = frames.PING
_PING_ACK = frames.frame(frames.PING, frames.ACK, 0, bytes(8))[:9]  # the ACK header; payload next
_WINDOW_UPDATE = frames.WINDOW_UPDATE
_WINDOW_INCREMENT = struct.Struct(">L").unpack_from


class Connection(CallsOut, RepliesIn, ControlIn):
    """The client side of one HTTP/2 connection (RFC 9113), for gRPC calls only."""

    # --- asyncio.Protocol ------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods.
        self.transport = self.writer.transport = transport  # type: ignore[assignment]
        settings = {
            frames.SETTINGS_ENABLE_PUSH: 0,
            frames.SETTINGS_INITIAL_WINDOW_SIZE: STREAM_WINDOW,
            frames.SETTINGS_MAX_HEADER_LIST_SIZE: MAX_HEADER_LIST_SIZE,
        }
        self.transport.write(  # type: ignore[union-attr]
            frames.PREFACE
            + frames.settings_frame(settings)
            + frames.window_update(0, CONNECTION_WINDOW - frames.DEFAULT_WINDOW)
        )
        self.keepalive.start()

    def data_received(self, data: bytes, position: int = 0, now: float = 0.0) -> None:
        """Every whole frame in ``data`` from ``position``; the rest is kept in
        ``buffer``. The frames are cut here as ``frames.FrameSplitter`` cuts them,
        inline: a list of tuples per read cost more than the rest of a DATA frame's
        handling. The loop is here, not in a method this calls, because with 1,000
        connections each carrying one call a read is a call: the second Python call per
        read cost that case 60,100 instructions per call against 57,900-58,700
        (``benchmarks/instructions.py``, builtin-1000).

        The event loop passes a read only; ``_after_held`` passes ``position`` and
        ``now`` too, for the bytes that complete a held frame and those after it."""
        if not now:
            # One clock reading per socket read: what came in it arrived together (the
            # time of a call's first reply message, and the gaps between its messages).
            now = self.received_at = time.perf_counter()
            if self.buffer:
                self._after_held(data, now)
                return
        size = len(data)
        unpack = _UNPACK_FRAME_HEADER
        message_prefix = _UNPACK_MESSAGE_PREFIX
        data_head = _UNPACK_DATA_HEAD
        cache = self.decoder.cache
        streams = self.streams
        largest = self.max_recv or _NO_LIMIT  # the largest reply message taken
        try:
            while size - position >= _HEADER_SIZE:
                high, low, frame_type, flags, stream_id = unpack(data, position)
                length = (high << 16) | low
                if length > _MAX_FRAME:  # what we advertise
                    raise frames.oversized(length, _MAX_FRAME)
                start = position + _HEADER_SIZE
                position = start + length
                if position > size:
                    position = start - _HEADER_SIZE
                    break
                stream_id &= 0x7FFFFFFF
                if not stream_id and self.continued is None:
                    # control_in's two common cases, inline and first: a PING to answer,
                    # and the connection's WINDOW_UPDATE with nothing waiting for window.
                    # grpc-go sends one of each per call when a connection carries one
                    # call, so with 1,000 connections they are two of a call's 3 frames.
                    if frame_type == _PING and flags == 0 and length == 8:
                        self._write(_PING_ACK + data[start:position])
                        continue
                    if (
                        frame_type == _WINDOW_UPDATE
                        and length == 4
                        and not self.blocked
                        and (increment := _WINDOW_INCREMENT(data, start)[0] & 0x7FFFFFFF) > 0
                        and self.send_flow.window + increment <= frames.MAX_WINDOW
                    ):
                        self.send_flow.window += increment
                        continue
                stream = streams.get(stream_id)
                if (
                    frame_type == _DATA
                    and stream is not None
                    and length > 4
                    and not flags & _DATA_FLAGS_ELSEWHERE
                    and self.continued is None
                    and not stream.have
                    and stream.headers_seen
                    and stream.on_message is None
                    and self.recv_used + length < CREDIT_AT
                    and message_prefix(data, start) == (0, length - 5)
                    and length - 5 <= largest
                ):  # _data's common case, inline: DATA frames of one stream, each one
                    # whole message, counted as messages.read counts them (their bytes
                    # never copied out of the read); it runs no caller's code
                    first = length
                    # The frames after it in this read, while they are more of the same
                    # (a frame's type is its fourth byte: a reply's trailers end this at
                    # once, so a unary call pays one comparison for it). Each is read
                    # with its message prefix in one unpack (``_DATA_HEAD``), its flags
                    # and stream id compared as the words they fall in; what the frames
                    # add up to is worked out once, after the run.
                    run_start = position
                    count = 1
                    same_flags_id = stream_id >> 8  # no flags; the id's first 3 bytes
                    same_id_prefix = (stream_id & 0xFF) << 8  # its last; not compressed
                    while size - position >= _DATA_HEAD_SIZE and data[position + 3] == _DATA:
                        length_kind, flags_id, id_prefix, wanted = data_head(data, position)
                        length = length_kind >> 8
                        end = position + _HEADER_SIZE + length
                        if (
                            flags_id != same_flags_id
                            or id_prefix != same_id_prefix
                            or length != wanted + 5  # one whole message
                            or end > size
                            or wanted > largest
                        ):
                            break  # the outer loop reads it
                        position = end
                        count += 1
                    # the frames' payloads: the first's, and the run's bytes but headers
                    payload = first + position - run_start - (count - 1) * _HEADER_SIZE
                    sizes = payload - 5 * count
                    received = self.recv_used + payload
                    if received >= CREDIT_AT:  # a read is far smaller than the window
                        if received > CONNECTION_WINDOW:  # as _data: the peer overran it
                            raise ConnectionError_(
                                frames.FLOW_CONTROL_ERROR, "DATA beyond our connection window"
                            )
                        self._write(frames.window_update(0, received))
                        received = 0
                    self.recv_used = received
                    credit = stream.recv_used + payload
                    if credit >= STREAM_CREDIT_AT:
                        self._write(frames.window_update(stream_id, credit))
                        credit = 0
                    stream.recv_used = credit
                    stream.bytes += sizes
                    if stream.messages:
                        stream.messages += count
                        messages.timed(stream, count, now)
                    else:  # messages.timed's first case, inline (every unary reply)
                        stream.messages = count
                        stream.first_at = stream.last_at = now
                        stream.together = count - 1
                    continue
                if self.continued is not None:
                    self._continuation(frame_type, flags, stream_id, data[start:position])
                elif frame_type == _DATA:
                    self._data(flags, stream_id, data[start:position])
                elif frame_type != frames.HEADERS:
                    self._control(frame_type, flags, stream_id, data[start:position])
                elif flags & PLAIN_HEADERS_MASK != frames.END_HEADERS or stream is None:
                    self._headers(flags, stream_id, data[start:position])
                else:
                    # _header_block's two common cases, inline: a call's plain reply
                    # headers, and its OK trailers once its request and reply are whole.
                    block = data[start:position]
                    headers = cache.get(block)
                    ended = None  # OK trailers that end the call
                    if headers is None or not headers.plain:
                        self._header_block(stream_id, flags, block)
                    elif not flags & frames.END_STREAM:
                        if stream.headers_seen or stream.on_headers is not None:
                            self._header_block(stream_id, flags, block)
                        else:
                            stream.headers_seen = True
                            stream.http_status = headers.http_status
                            stream.encoding = headers.encoding
                            stream.initial_metadata = headers
                            # the rest of a unary reply at once, if it is all here
                            end = take_unary_reply(
                                self, stream, stream_id, data, position, size, now, largest
                            )
                            if end < 0:
                                continue  # nothing ran that could close the connection
                            position = end
                            ended = stream.trailing_metadata  # its trailers, taken there
                    elif (
                        headers.plain_ok
                        and stream.headers_seen
                        and stream.state == HALF_CLOSED_LOCAL
                        and not (stream.have or self.blocked)
                    ):
                        ended = headers
                    else:
                        self._header_block(stream_id, flags, block)
                    if ended is not None:
                        del streams[stream_id]
                        stream.trailing_metadata = ended
                        stream.state = CLOSED  # transition: finish from HALF_CLOSED_LOCAL
                        stream.status = status.OK
                        stream.message = ended.grpc_message
                        stream.on_done(stream)
                        if self.pending or self.draining:
                            self._after_close()
                if self.closed:
                    return
        except ConnectionError_ as error:
            self.fail(error.code, error.reason)
            return
        self.buffer = data[position:] if position < size else b""

    def _after_held(self, data: bytes, now: float) -> None:
        """A read after one that ended inside a frame. That frame is completed with the
        first bytes of this read, and the rest is cut where it lies: adding the held
        bytes to the whole read copied every byte of a large reply once more (a read is
        up to 256 KB)."""
        held = self.buffer
        head = held if len(held) >= _HEADER_SIZE else held + data[:_HEADER_SIZE]
        length = _MAX_FRAME + 1
        if len(head) >= _HEADER_SIZE:
            high, low, _, _, _ = _UNPACK_FRAME_HEADER(head)
            length = (high << 16) | low
        need = _HEADER_SIZE + length - len(held)  # of this read's bytes, to complete it
        if length > _MAX_FRAME or need > len(data):
            # still not whole, or oversized (the loop says so)
            self.data_received(held + data, 0, now)
            return
        self.buffer = b""
        self.data_received(held + data[:need], 0, now)
        if need < len(data) and not self.closed:
            self.data_received(data, need, now)

    def eof_received(self) -> bool | None:
        return None  # close the transport: connection_lost ends what is open

    def connection_lost(self, exc: Exception | None) -> None:
        reason = self.close_reason or (
            f"connection lost: {exc}" if exc else "the server closed the connection"
        )
        self._closed(reason)

    # --- teardown -------------------------------------------------------------------

    def fail(self, code: int, reason: str) -> None:
        """The peer broke the protocol: GOAWAY with the error, then close."""
        if self.closed:
            return
        self.close_reason = f"the server broke HTTP/2: {reason}"
        if self.transport is not None:
            self._write(frames.goaway(0, code, reason.encode()[:100]))
            self.writer.flush()
            self.transport.close()
        self._closed(self.close_reason)

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self._write(frames.goaway(0, frames.NO_ERROR))
            self.writer.flush()
            self.transport.close()
        self._closed("the client closed the connection")

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()
        self._closed("the client closed the connection")

    def _closed(self, reason: str) -> None:
        first = not self.closed or self.streams or self.pending
        self.closed = True
        self.close_reason = self.close_reason or reason
        self.deadlines.cancel()
        self.keepalive.stop()
        if not self.ready.done():
            self.ready.set_exception(ConnectionRefusedError(self.close_reason))
            self.ready.exception()  # retrieved: connect() reports it
        open_calls = list(self.streams.values()) + list(self.pending)
        self.streams.clear()
        self.pending.clear()
        self.blocked.clear()
        for stream in open_calls:
            finish(stream, status.UNAVAILABLE, self.close_reason)
        if first and self.owner is not None:
            self.owner.connection_closed(self)
