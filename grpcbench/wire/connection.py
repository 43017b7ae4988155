"""One HTTP/2 client connection carrying gRPC calls, as an asyncio ``Protocol``.

Everything is a callback: a call is a ``WireStream`` whose ``on_done`` runs
once, with ``status`` and ``message`` set, when the call ends for any reason
(trailers, RST_STREAM, GOAWAY, deadline, connection loss). No coroutine,
task or timer exists per call, which is what makes the transport cheap.

The common frames (plain reply headers, OK trailers that end a whole call, a DATA
frame of one whole counted message) are handled inline in ``data_received``'s loop;
every other case takes the general methods below, and tests/test_wire_fast_paths.py
holds the two to the same outcomes. A unary request sent again on a connection is
its kept frames with a new stream id (``headers.RequestFrames``).

This module is what the frames *do* to the calls; each other concern has its own
module, as h2 keeps them:
- ``stream``: a call's state machine (IDLE, OPEN, HALF_CLOSED_LOCAL, CLOSED);
- ``control``: the control frames' checks and parsing;
- ``flow``: both directions' windows, and the streams waiting for window;
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
import contextlib
import random
import struct
import time
from collections import deque

from grpcbench.wire import control, frames, keepalive, messages, status
from grpcbench.wire.deadlines import Deadlines
from grpcbench.wire.flow_control import (
    CONNECTION_WINDOW,
    CREDIT_AT,
    STREAM_CREDIT_AT,
    STREAM_WINDOW,
    SendFlow,
)
from grpcbench.wire.frames import ConnectionError_
from grpcbench.wire.header_blocks import PLAIN_HEADERS_MASK, ContinuedBlock, split_block
from grpcbench.wire.headers import (
    MAX_HEADER_LIST_SIZE,
    METADATA_SOFT_LIMIT,
    ReplyHeaderDecoder,
    RequestEncoder,
    RequestFrames,
    metadata_refusal,
)
from grpcbench.wire.keepalive import Keepalive
from grpcbench.wire.stream import (
    CLOSED,
    HALF_CLOSED_LOCAL,
    IDLE,
    OPEN,
    StreamOwner,
    StreamStateError,
    WireStream,
    finish,
    opened,
    requeued,
)
from grpcbench.wire.writer import FrameWriter, prefix

__all__ = ["CONNECTION_WINDOW", "STREAM_WINDOW", "Connection", "http_error"]

# DATA flags that take the general path (``Connection._data``): padding, and the end
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
_NO_LIMIT = 1 << 32  # a message's length is 32 bits


def http_error(http_status: int) -> str:
    """grpc's text for a reply whose HTTP status is not 200."""
    return f"Received http2 header with status: {http_status}"


class Connection(asyncio.Protocol):
    """The client side of one HTTP/2 connection (RFC 9113), for gRPC calls only."""

    def __init__(self, owner: StreamOwner | None = None) -> None:
        self.owner = owner
        self.loop = asyncio.get_event_loop()
        self.transport: asyncio.Transport | None = None
        self.ready: asyncio.Future[None] = self.loop.create_future()
        self.buffer = b""  # the start of a frame still arriving
        self.decoder = ReplyHeaderDecoder()
        self.encoder = RequestEncoder()
        self.streams: dict[int, WireStream] = {}  # open on this connection, by id
        self.pending: deque[WireStream] = deque()  # IDLE, behind MAX_CONCURRENT_STREAMS
        self.next_id = 1
        self.max_streams = 2**31  # the peer's MAX_CONCURRENT_STREAMS
        self.writer = FrameWriter(self.loop)
        self._write = self.writer.write
        # The owner's client options (rpc.client_options): a reply message size limit
        # (0: none) and a keepalive PING interval (0: none).
        self.max_recv: int = getattr(owner, "max_recv_bytes", 0)
        self.keepalive = Keepalive(
            self.loop, getattr(owner, "keepalive_s", 0.0), self._write, lambda: bool(self.streams)
        )
        self.send_flow = SendFlow(self._write, self.keepalive)
        self.blocked = self.send_flow.blocked  # streams waiting for window (``flow``)
        self.recv_used = 0  # connection bytes read since our last WINDOW_UPDATE
        self.received_at = 0.0  # perf_counter() of the socket read under way
        self.draining = False  # GOAWAY received or ids exhausted: no new streams
        self.closed = False
        self.close_reason = ""
        self.continued: ContinuedBlock | None = None
        self.deadlines = Deadlines(
            self.loop,
            lambda: (self.streams.values(), self.pending),
            lambda stream: self.cancel(stream, status.DEADLINE_EXCEEDED, "Deadline Exceeded"),
        )
        self.goaway_code: int | None = None

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

    def data_received(self, data: bytes) -> None:
        # One clock reading per socket read: what came in it arrived together (the time
        # of a call's first reply message, and the gaps between a stream's messages).
        now = self.received_at = time.perf_counter()
        # The frames are cut here as ``frames.FrameSplitter`` cuts them, inline: a
        # list of tuples per read cost more than the rest of a DATA frame's handling.
        if self.buffer:
            data = self.buffer + data
        size = len(data)
        position = 0
        unpack = _FRAME_HEADER.unpack_from
        message_prefix = _MESSAGE_PREFIX.unpack_from
        data_head = _DATA_HEAD.unpack_from
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
                            continue  # nothing ran that could close the connection
                    elif (
                        headers.grpc_status == status.OK
                        and stream.headers_seen
                        and stream.state == HALF_CLOSED_LOCAL
                        and not (stream.have or self.blocked)
                    ):
                        del streams[stream_id]
                        stream.trailing_metadata = headers
                        stream.state = CLOSED  # transition: finish from HALF_CLOSED_LOCAL
                        stream.status = status.OK
                        stream.message = headers.grpc_message
                        stream.on_done(stream)
                        if self.pending or self.draining:
                            self._after_close()
                    else:
                        self._header_block(stream_id, flags, block)
                if self.closed:
                    return
        except ConnectionError_ as error:
            self.fail(error.code, error.reason)
            return
        self.buffer = data[position:] if position < size else b""

    def eof_received(self) -> bool | None:
        return None  # close the transport: connection_lost ends what is open

    def connection_lost(self, exc: Exception | None) -> None:
        reason = self.close_reason or (
            f"connection lost: {exc}" if exc else "the server closed the connection"
        )
        self._closed(reason)

    # --- calls ------------------------------------------------------------------------

    def start(self, stream: WireStream) -> None:
        """Send a call now, or queue it behind MAX_CONCURRENT_STREAMS."""
        if self.closed or self.draining:
            if self.owner is not None and stream.retryable:
                stream.retryable = False
                self.owner.resend([stream])
            else:
                finish(stream, status.UNAVAILABLE, self.close_reason or "connection draining")
            return
        self.deadlines.watch(stream)
        if len(self.streams) >= self.max_streams:
            self.pending.append(stream)
            return
        self._open(stream)

    def start_unary(self, stream: WireStream) -> None:
        """``start`` on a live connection (neither closed nor draining: the caller
        checked), for the callback loops. A whole unary request sent before on this
        connection is its kept frames with a new stream id (``RequestFrames``), with
        ``start``'s and ``_open``'s steps inline; anything else takes ``start``."""
        unary = self.encoder.unary.get(stream.request)
        flow = self.send_flow
        stream_id = self.next_id
        body = stream.body
        if (
            unary is None
            or len(self.streams) >= self.max_streams
            or stream_id > frames.MAX_STREAM_ID
            or unary.length > flow.window
            or not (unary.body is body or unary.body == body)
        ):
            self.start(stream)
            return
        self.deadlines.watch(stream)
        self.next_id = stream_id + 2
        self.keepalive.pings_without_data = 0
        self.streams[stream_id] = stream
        self._send_kept(stream, stream_id, unary)

    def _send_kept(self, stream: WireStream, stream_id: int, unary: RequestFrames) -> None:
        """A whole unary request again, as it left this connection before: its kept
        frames with the new stream id (``RequestFrames``)."""
        flow = self.send_flow
        flow.window -= unary.length
        stream.send_window = flow.stream_window - unary.length
        if stream.state != IDLE:  # the table's only source of opened(END_STREAM)
            raise StreamStateError(stream_id, "opened(END_STREAM)", stream.state)
        stream.state = HALF_CLOSED_LOCAL  # transition: opened(END_STREAM) from IDLE
        stream.id = stream_id
        stream.connection = self
        sid = stream_id.to_bytes(4, "big")
        self._write(unary.head + sid + unary.middle + sid + stream.body)

    def _open(self, stream: WireStream) -> None:
        """HEADERS, and the request body with them as far as the windows allow."""
        stream_id = self.next_id
        if stream_id > frames.MAX_STREAM_ID:
            self._drain("stream ids exhausted")
            self.start(stream)
            return
        self.next_id = stream_id + 2
        self.keepalive.pings_without_data = 0  # HEADERS go out: keepalive may ping again
        self.streams[stream_id] = stream
        flow = self.send_flow
        request = stream.request
        unary = self.encoder.unary.get(request)
        body = stream.body
        if (
            unary is not None
            and (unary.body is body or unary.body == body)
            and unary.length <= flow.window
        ):
            self._send_kept(stream, stream_id, unary)
            return
        stream.send_window = flow.stream_window
        block = self.encoder.encode(request)  # in the order blocks leave
        sid = stream_id.to_bytes(4, "big")
        length = len(body)
        ends_with_headers = stream.end and not length
        if len(block) <= flow.max_frame:
            flags = frames.END_HEADERS | (frames.END_STREAM if ends_with_headers else 0)
            out = prefix(frames.HEADERS, flags, len(block)) + sid + block
        else:
            out = split_block(stream_id, block, ends_with_headers, flow.max_frame)
        if (
            length
            and length <= stream.send_window
            and length <= flow.window
            and (length <= flow.max_frame)
        ):  # the whole body in one DATA frame, the common case
            stream.send_window -= length
            flow.window -= length
            data_prefix = prefix(frames.DATA, frames.END_STREAM if stream.end else 0, length)
            out += data_prefix + sid + body
            opened(stream, stream_id, self, stream.end)
            if stream.end and len(block) <= flow.max_frame:
                self.encoder.remember_unary(request, body, out[:5], block + data_prefix)
        else:
            opened(stream, stream_id, self, ends_with_headers)
            if length:
                stream.unsent = body
                stream.unsent_end = stream.end
        self._write(out)
        if stream.unsent:
            flow.send(stream)

    def send(self, stream: WireStream, data: bytes, end: bool) -> None:
        """More request bytes (length-prefixed messages) on a stream."""
        if stream.state == IDLE:  # still pending: it goes with the headers
            stream.body += data
            stream.end = end
            return
        if stream.state != OPEN:
            return
        stream.unsent = stream.unsent[stream.unsent_at :] + data if stream.unsent else data
        stream.unsent_at = 0
        stream.unsent_end = end
        self.send_flow.send(stream)

    def cancel(self, stream: WireStream, code: int, message: str) -> None:
        """End a call from our side (deadline, the caller gave up): RST_STREAM(CANCEL)."""
        if stream.state == CLOSED:
            return
        if stream.id and stream.id in self.streams:
            del self.streams[stream.id]
            self.send_flow.forget(stream)
            if not self.closed:
                self._write(frames.rst_stream(stream.id, frames.CANCEL))
        else:
            with contextlib.suppress(ValueError):
                self.pending.remove(stream)
        finish(stream, code, message)
        self._after_close()

    # --- frames in ------------------------------------------------------------------

    def _data(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id == 0:
            raise ConnectionError_(frames.PROTOCOL_ERROR, "DATA on stream 0")
        # Flow control in (``flow``), inline: this runs for every reply.
        size = len(payload)
        used = self.recv_used + size
        if used > CONNECTION_WINDOW:
            raise ConnectionError_(frames.FLOW_CONTROL_ERROR, "DATA beyond our connection window")
        if used >= CREDIT_AT:
            self._write(frames.window_update(0, used))
            used = 0
        self.recv_used = used
        stream = self.streams.get(stream_id)
        if stream is None:
            self._unknown_stream(stream_id)
            return
        if flags & frames.PADDED:
            payload = frames.strip_padding(flags, payload, frames.DATA)
        if not stream.headers_seen:
            self._stream_error(stream, "DATA before the reply headers")
            return
        end = flags & frames.END_STREAM
        if not end:  # an ended stream needs no more credit
            stream.recv_used += size
            if stream.recv_used >= STREAM_CREDIT_AT:
                self._write(frames.window_update(stream_id, stream.recv_used))
                stream.recv_used = 0
        if payload:
            data = messages.take(stream, payload)
            if data is not None:
                problem = messages.read(stream, data, self.max_recv, self.received_at)
                if problem is not None:
                    self.cancel(stream, *problem)
        if end and stream.state != CLOSED:
            self._ended(stream)
            if stream.state != CLOSED:
                finish(stream, status.INTERNAL, "the server ended the stream without trailers")
            self._after_close()

    def _headers(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id == 0:
            raise ConnectionError_(frames.PROTOCOL_ERROR, "HEADERS on stream 0")
        if flags & (frames.PADDED | frames.PRIORITY_FLAG):
            payload = frames.strip_padding(flags, payload, frames.HEADERS)
        if not flags & frames.END_HEADERS:
            self.continued = ContinuedBlock(stream_id, flags, payload)
            return
        self._header_block(stream_id, flags, payload)

    def _continuation(self, frame_type: int, flags: int, stream_id: int, payload: bytes) -> None:
        continued = self.continued
        assert continued is not None
        block = continued.add(frame_type, flags, stream_id, payload)
        if block is not None:
            self.continued = None
            self._header_block(continued.stream_id, continued.flags, block)

    def _header_block(self, stream_id: int, flags: int, block: bytes) -> None:
        decoder = self.decoder  # always decoded: the table must stay in step
        headers = decoder.cache.get(block) or decoder.decode(block)
        stream = self.streams.get(stream_id)
        if stream is None:
            self._unknown_stream(stream_id)
            return
        end = flags & frames.END_STREAM
        if headers.size > METADATA_SOFT_LIMIT:
            refused = metadata_refusal(headers.size, random.random())
            if refused is not None:  # as grpc refuses it: the call ends, trailers unread
                self.cancel(stream, status.RESOURCE_EXHAUSTED, f"Stream removed ({refused})")
                return
        if not stream.headers_seen:
            stream.headers_seen = True
            stream.http_status = headers.http_status
            stream.encoding = headers.encoding
            stream.initial_metadata = headers
            if not end:
                http = headers.http_status
                if http not in (0, 200):  # grpc ends the call at once, trailers unread
                    self.cancel(stream, status.from_http_status(http), http_error(http))
                    return
                if stream.on_headers is not None:
                    stream.on_headers(stream)
                return
        elif not end:
            self._stream_error(stream, "trailers without END_STREAM")
            return
        stream.trailing_metadata = headers
        self._ended(stream)
        self._after_close()

    def _ended(self, stream: WireStream) -> None:
        """The server ended the stream: its status from the trailers (or trailers-only
        headers), else from the HTTP status; the stream is closed on both sides."""
        self.streams.pop(stream.id, None)
        if self.blocked:
            self.send_flow.forget(stream)
        if stream.state == OPEN and self.transport is not None and not self.closed:
            # The server ended first: tell it we will send no more (as grpc does).
            self._write(frames.rst_stream(stream.id, frames.NO_ERROR))
        trailers = stream.trailing_metadata
        if trailers is None:
            return  # the caller decides (DATA with END_STREAM and no trailers)
        code = trailers.grpc_status
        message = trailers.grpc_message
        if code < 0:
            http = stream.http_status
            if http and http != 200:
                code, message = status.from_http_status(http), http_error(http)
            else:
                code, message = status.UNKNOWN, "the server's trailers have no grpc-status"
        elif code == status.OK and stream.have:
            code, message = status.INTERNAL, "the stream ended inside a message"
        finish(stream, code, message)

    def _stream_error(self, stream: WireStream, reason: str) -> None:
        """The server broke one stream: reset it and end the call Internal."""
        self.cancel(stream, status.INTERNAL, f"protocol error: {reason}")

    def _unknown_stream(self, stream_id: int) -> None:
        """A frame for a stream we never opened is a connection error; one we already
        closed (a reset or expired call) is ignored."""
        if stream_id >= self.next_id or not stream_id % 2:
            raise ConnectionError_(frames.PROTOCOL_ERROR, f"a frame on unopened stream {stream_id}")

    def _control(self, frame_type: int, flags: int, stream_id: int, payload: bytes) -> None:
        if frame_type == frames.SETTINGS:
            values = control.settings(flags, stream_id, payload)
            if values is not None:
                self._settings(values)
        elif frame_type == frames.WINDOW_UPDATE:
            self._window_update(stream_id, control.window_increment(payload))
        elif frame_type == frames.PING:
            answer = control.ping_answer(flags, stream_id, payload)
            if answer is not None:
                self._write(answer)
        elif frame_type == frames.RST_STREAM:
            self._rst_stream(stream_id, control.rst_stream_code(stream_id, payload))
        elif frame_type == frames.GOAWAY:
            self._goaway(*control.goaway(stream_id, payload))
        else:
            control.check_other(frame_type, payload)

    def _settings(self, settings: list[tuple[int, int]]) -> None:
        for key, value in settings:
            if key == frames.SETTINGS_MAX_CONCURRENT_STREAMS:
                self.max_streams = value
            elif key == frames.SETTINGS_INITIAL_WINDOW_SIZE:
                self.send_flow.initial_window(value, self.streams.values())
                self.encoder.unary.clear()  # framed for the old window
            elif key == frames.SETTINGS_MAX_FRAME_SIZE:
                self.send_flow.max_frame = value
                self.encoder.unary.clear()
            elif key == frames.SETTINGS_HEADER_TABLE_SIZE:
                self.encoder.table_size(value)
        self._write(frames.frame(frames.SETTINGS, frames.ACK, 0))
        if not self.ready.done():
            self.ready.set_result(None)
        self.send_flow.unblock()
        self._start_pending()

    def _window_update(self, stream_id: int, increment: int) -> None:
        stream = None
        if stream_id:
            stream = self.streams.get(stream_id)
            if stream is None:
                return  # a stream that ended: its window no longer matters
        problem = self.send_flow.window_update(stream, increment)
        if problem and stream is not None:
            self._stream_error(stream, problem)
            return
        self.send_flow.unblock()

    def _rst_stream(self, stream_id: int, code: int) -> None:
        stream = self.streams.pop(stream_id, None)
        if stream is None:
            self._unknown_stream(stream_id)
            return
        self.send_flow.forget(stream)
        if code == frames.REFUSED_STREAM and stream.retryable and self.owner is not None:
            requeued(stream)  # never processed: send it again, once
            self.owner.resend([stream])
        elif code == frames.CANCEL and time.perf_counter() >= stream.deadline:
            # The server's deadline fired (grpc-go resets with CANCEL): past the call's
            # own deadline grpc reports it as the deadline, and so does this.
            finish(stream, status.DEADLINE_EXCEEDED, "Deadline Exceeded")
        else:
            finish(stream, status.from_rst_stream(code), f"RST_STREAM with error code {code}")
        self._after_close()

    def _goaway(self, last: int, code: int, debug: str) -> None:
        """No new streams here; the ones above ``last`` were not processed: resend them."""
        self.goaway_code = code
        keepalive.back_off(self.owner, code, debug)
        unprocessed = [s for sid, s in list(self.streams.items()) if sid > last]
        for stream in unprocessed:
            del self.streams[stream.id]
        self._drain(f"GOAWAY (error code {code}{': ' + debug if debug else ''})", unprocessed)

    def _drain(self, reason: str, unprocessed: list[WireStream] | None = None) -> None:
        self.draining = True
        self.close_reason = reason
        again = (unprocessed or []) + list(self.pending)
        self.pending.clear()
        retry = []
        for stream in again:
            self.send_flow.forget(stream)
            if stream.retryable and self.owner is not None:
                if stream.state == IDLE:  # pending here: never opened
                    stream.retryable = False
                else:
                    requeued(stream)
                retry.append(stream)
            else:
                finish(stream, status.UNAVAILABLE, f"not processed: {reason}")
        if self.owner is not None:
            self.owner.connection_closed(self)
            if retry:
                self.owner.resend(retry)
        self._after_close()

    def _start_pending(self) -> None:
        while self.pending and len(self.streams) < self.max_streams and not self.draining:
            stream = self.pending.popleft()
            if stream.state != CLOSED:
                self._open(stream)

    def _after_close(self) -> None:
        if self.pending:
            self._start_pending()
        if self.draining and not self.streams and not self.closed and self.transport:
            self.closed = True
            self.writer.flush()
            self.transport.close()

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
