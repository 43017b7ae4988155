"""One HTTP/2 client connection carrying gRPC calls, as an asyncio ``Protocol``.

Everything is a callback: a call is a ``WireStream`` whose ``on_done`` runs
once, with ``status`` and ``message`` set, when the call ends for any reason
(trailers, RST_STREAM, GOAWAY, deadline, connection loss). No coroutine,
task or timer exists per call, which is what makes the transport cheap:
- deadlines: one timer per connection, due at the earliest deadline of its
  calls (``deadlines``);
- reply messages: cut from DATA frames, a message that spans frames joined once
  when whole (``messages``);
- writes: frames are appended to a list that is flushed once per loop
  iteration, so the calls a batch of replies starts leave in one ``write``;
- flow control: request bodies go out within the peer's connection and stream
  windows (split to its MAX_FRAME_SIZE), the rest waits for WINDOW_UPDATE;
  what we read is credited back once a quarter of our window is used;
- MAX_CONCURRENT_STREAMS: calls beyond it wait in ``pending`` in order;
- GOAWAY: calls the server did not process (ids above its last-stream-id, and
  the pending ones) go back to the channel to be sent on a new connection
  (once; then Unavailable), so none is lost; stream-id exhaustion does the same.

A call is a ``stream.WireStream``. Statuses follow gRPC's PROTOCOL-HTTP2.md:
RST_STREAM codes and HTTP statuses are mapped as grpc maps them (``status``); a
connection the peer breaks ends every call on it with Unavailable and the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import deque
from typing import Any

from grpcbench.wire import frames, messages, status
from grpcbench.wire.deadlines import Deadlines
from grpcbench.wire.frames import ConnectionError_
from grpcbench.wire.headers import (
    MAX_HEADER_LIST_SIZE,
    METADATA_SOFT_LIMIT,
    ReplyHeaderDecoder,
    RequestEncoder,
    metadata_refusal,
)
from grpcbench.wire.stream import StreamOwner, WireStream, finish

# What we advertise: large receive windows (a benchmark reads at once), no push.
STREAM_WINDOW = 8 << 20
CONNECTION_WINDOW = 32 << 20
MAX_PINGS_WITHOUT_DATA = 2  # grpc's grpc.http2.max_pings_without_data default
# HEADERS with END_HEADERS and neither PADDED nor PRIORITY: no CONTINUATION, no stripping.
_PLAIN_HEADERS_MASK = frames.END_HEADERS | frames.PADDED | frames.PRIORITY_FLAG
_PREFIXES: dict[tuple[int, int, int], bytes] = {}


def _prefix(kind: int, flags: int, length: int) -> bytes:
    """A frame header's first 5 bytes, cached (a level sends a few distinct ones)."""
    key = (kind, flags, length)
    prefix = _PREFIXES.get(key)
    if prefix is None:
        if len(_PREFIXES) > 4096:
            _PREFIXES.clear()
        prefix = _PREFIXES[key] = frames.frame_prefix(kind, flags, length)
    return prefix


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
        self.splitter = frames.FrameSplitter()
        self.decoder = ReplyHeaderDecoder()
        self.encoder = RequestEncoder()
        self.streams: dict[int, WireStream] = {}
        self.pending: deque[WireStream] = deque()
        self.blocked: deque[WireStream] = deque()  # streams with body waiting for window
        self.next_id = 1
        self.max_streams = 2**31  # the peer's MAX_CONCURRENT_STREAMS
        self.peer_window = frames.DEFAULT_WINDOW  # its initial stream window
        self.peer_frame = frames.DEFAULT_MAX_FRAME_SIZE
        self.send_window = frames.DEFAULT_WINDOW  # connection level
        self.recv_used = 0
        self.out: list[bytes] = []
        self.flush_scheduled = False
        self.draining = False  # GOAWAY received or ids exhausted: no new streams
        self.closed = False
        self.close_reason = ""
        self.continuing: tuple[int, int, list[bytes]] | None = None
        self.deadlines = Deadlines(
            self.loop,
            lambda: (self.streams.values(), self.pending),
            lambda stream: self.cancel(stream, status.DEADLINE_EXCEEDED, "Deadline Exceeded"),
        )
        self.goaway_code: int | None = None
        # The owner's client options (rpc.client_options): a reply message size limit
        # (0: none) and a keepalive PING interval (0: none).
        self.max_recv: int = getattr(owner, "max_recv_bytes", 0)
        self.keepalive_s: float = getattr(owner, "keepalive_s", 0.0)
        self.pinger: asyncio.TimerHandle | None = None
        self.pings_without_data = 0  # keepalive PINGs since we last sent HEADERS or DATA

    # --- asyncio.Protocol ------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods.
        self.transport = transport  # type: ignore[assignment]
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
        if self.keepalive_s:
            self.pinger = self.loop.call_later(self.keepalive_s, self._keepalive)

    def _keepalive(self) -> None:
        """--keepalive: a PING every interval, throttled as grpc throttles it (gRFC A8):
        only while calls are open (no keepalive_permit_without_calls), and at most
        ``MAX_PINGS_WITHOUT_DATA`` before we send data again; grpc-go's default policy
        answers more with GOAWAY too_many_pings. The peer's ACK needs no answer."""
        if self.closed:
            return
        if self.streams and self.pings_without_data < MAX_PINGS_WITHOUT_DATA:
            self._write(frames.frame(frames.PING, 0, 0, b"grpcbnch"))
            self.pings_without_data += 1
        self.pinger = self.loop.call_later(self.keepalive_s, self._keepalive)

    def data_received(self, data: bytes) -> None:
        try:
            for kind, flags, stream_id, payload in self.splitter.split(data):
                if self.continuing is not None:
                    self._continuation(kind, flags, stream_id, payload)
                elif kind == frames.DATA:
                    self._data(flags, stream_id, payload)
                elif kind == frames.HEADERS:
                    if flags & _PLAIN_HEADERS_MASK == frames.END_HEADERS and stream_id:
                        self._header_block(stream_id, flags, payload)  # the common case
                    else:
                        self._headers(flags, stream_id, payload)
                else:
                    self._control(kind, flags, stream_id, payload)
                if self.closed:
                    return
        except ConnectionError_ as error:
            self.fail(error.code, error.reason)

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
        if len(self.streams) >= self.max_streams:
            self.pending.append(stream)
            self.deadlines.watch(stream)
            return
        self._open(stream)

    def _open(self, stream: WireStream) -> None:
        stream_id = self.next_id
        if stream_id > frames.MAX_STREAM_ID:
            self._drain("stream ids exhausted")
            self.start(stream)
            return
        self.next_id = stream_id + 2
        self.pings_without_data = 0  # HEADERS go out: keepalive may ping again
        stream.id = stream_id
        stream.connection = self
        stream.send_window = self.peer_window
        self.streams[stream_id] = stream
        block = self.encoder.encode(stream.request)  # in the order blocks leave
        body = stream.body
        sid = stream_id.to_bytes(4, "big")
        length = len(body)
        if len(block) <= self.peer_frame:
            flags = frames.END_HEADERS | (frames.END_STREAM if stream.end and not length else 0)
            out = _prefix(frames.HEADERS, flags, len(block)) + sid + block
        else:
            out = self._header_frames(stream_id, block, stream.end and not length)
        if (
            length
            and length <= stream.send_window
            and length <= self.send_window
            and (length <= self.peer_frame)
        ):
            stream.send_window -= length
            self.send_window -= length
            flags = frames.END_STREAM if stream.end else 0
            out += _prefix(frames.DATA, flags, length) + sid + body
            stream.local_closed = stream.end
        elif length:
            stream.unsent = body
            stream.unsent_end = stream.end
        else:
            stream.local_closed = stream.end
        self._write(out)
        if stream.unsent:
            self._send_unsent(stream)
        self.deadlines.watch(stream)

    def _header_frames(self, stream_id: int, block: bytes, end: bool) -> bytes:
        size = self.peer_frame
        chunks = [block[i : i + size] for i in range(0, len(block), size)]
        out = [frames.frame(frames.HEADERS, frames.END_STREAM if end else 0, stream_id, chunks[0])]
        for index, chunk in enumerate(chunks[1:], 2):
            flags = frames.END_HEADERS if index == len(chunks) else 0
            out.append(frames.frame(frames.CONTINUATION, flags, stream_id, chunk))
        return b"".join(out)

    def send(self, stream: WireStream, data: bytes, end: bool) -> None:
        """More request bytes (length-prefixed messages) on an open stream."""
        if stream.done or stream.local_closed:
            return
        if stream.id == 0:  # still pending: it goes with the headers
            stream.body += data
            stream.end = end
            return
        stream.unsent = stream.unsent[stream.unsent_at :] + data if stream.unsent else data
        stream.unsent_at = 0
        stream.unsent_end = end
        self._send_unsent(stream)

    def _send_unsent(self, stream: WireStream) -> None:
        """What the windows allow of ``stream.unsent``, frame by frame; each frame's
        bytes are copied once (the rest stays where it is, past ``unsent_at``)."""
        sid = stream.id
        out = []
        unsent = stream.unsent
        at = stream.unsent_at
        left = len(unsent) - at
        while left:
            size = min(left, stream.send_window, self.send_window, self.peer_frame)
            if size <= 0:
                if stream not in self.blocked:
                    self.blocked.append(stream)
                break
            chunk = unsent[at : at + size]
            at += size
            left -= size
            stream.send_window -= size
            self.send_window -= size
            last = not left and stream.unsent_end
            out.append(frames.frame(frames.DATA, frames.END_STREAM if last else 0, sid, chunk))
            stream.local_closed = last
        if left:
            stream.unsent_at = at
        else:
            stream.unsent, stream.unsent_at = b"", 0
        if not left and stream.unsent_end and not stream.local_closed:
            out.append(frames.frame(frames.DATA, frames.END_STREAM, sid))
            stream.local_closed = True
        if out:
            self.pings_without_data = 0
            self._write(b"".join(out))

    def cancel(self, stream: WireStream, code: int, message: str) -> None:
        """End a call from our side (deadline, the caller gave up): RST_STREAM(CANCEL)."""
        if stream.done:
            return
        if stream.id and stream.id in self.streams:
            del self.streams[stream.id]
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
        size = len(payload)
        self.recv_used += size
        if self.recv_used > CONNECTION_WINDOW:
            raise ConnectionError_(frames.FLOW_CONTROL_ERROR, "DATA beyond our connection window")
        if self.recv_used >= CONNECTION_WINDOW >> 2:
            self._write(frames.window_update(0, self.recv_used))
            self.recv_used = 0
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
        if not end:
            stream.recv_used += size
            if stream.recv_used >= STREAM_WINDOW >> 2:
                self._write(frames.window_update(stream_id, stream.recv_used))
                stream.recv_used = 0
        if payload:
            data = messages.take(stream, payload)
            if data is not None:
                problem = messages.read(stream, data, self.max_recv)
                if problem is not None:
                    self.cancel(stream, *problem)
        if end and not stream.done:
            self._ended(stream)
            if not stream.done:
                finish(stream, status.INTERNAL, "the server ended the stream without trailers")
            self._after_close()

    def _headers(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id == 0:
            raise ConnectionError_(frames.PROTOCOL_ERROR, "HEADERS on stream 0")
        if flags & (frames.PADDED | frames.PRIORITY_FLAG):
            payload = frames.strip_padding(flags, payload, frames.HEADERS)
        if not flags & frames.END_HEADERS:
            self.continuing = (stream_id, flags, [payload])
            return
        self._header_block(stream_id, flags, payload)

    def _continuation(self, kind: int, flags: int, stream_id: int, payload: bytes) -> None:
        assert self.continuing is not None
        first_id, first_flags, parts = self.continuing
        if kind != frames.CONTINUATION or stream_id != first_id:
            raise ConnectionError_(frames.PROTOCOL_ERROR, "a header block interrupted")
        parts.append(payload)
        if sum(map(len, parts)) > MAX_HEADER_LIST_SIZE * 2:
            raise ConnectionError_(frames.ENHANCE_YOUR_CALM, "an endless header block")
        if flags & frames.END_HEADERS:
            self.continuing = None
            self._header_block(first_id, first_flags, b"".join(parts))

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
        if self.blocked and stream in self.blocked:
            self.blocked.remove(stream)
        if not stream.local_closed and self.transport is not None and not self.closed:
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

    def _control(self, kind: int, flags: int, stream_id: int, payload: bytes) -> None:
        if kind == frames.SETTINGS:
            if stream_id:
                raise ConnectionError_(frames.PROTOCOL_ERROR, "SETTINGS on a stream")
            if flags & frames.ACK:
                if payload:
                    raise ConnectionError_(frames.FRAME_SIZE_ERROR, "a SETTINGS ACK with a payload")
                return
            self._settings(frames.parse_settings(payload))
        elif kind == frames.WINDOW_UPDATE:
            self._window_update(stream_id, payload)
        elif kind == frames.PING:
            if stream_id:
                raise ConnectionError_(frames.PROTOCOL_ERROR, "PING on a stream")
            if len(payload) != 8:
                raise ConnectionError_(frames.FRAME_SIZE_ERROR, "a PING that is not 8 bytes")
            if not flags & frames.ACK:
                self._write(frames.frame(frames.PING, frames.ACK, 0, payload))
        elif kind == frames.RST_STREAM:
            self._rst_stream(stream_id, payload)
        elif kind == frames.GOAWAY:
            if stream_id or len(payload) < 8:
                raise ConnectionError_(frames.PROTOCOL_ERROR, "a malformed GOAWAY")
            last = int.from_bytes(payload[:4], "big") & 0x7FFFFFFF
            code = int.from_bytes(payload[4:8], "big")
            self._goaway(last, code, payload[8:200].decode("utf-8", "replace"))
        elif kind == frames.PUSH_PROMISE:
            raise ConnectionError_(frames.PROTOCOL_ERROR, "PUSH_PROMISE, which we disabled")
        elif kind == frames.CONTINUATION:
            raise ConnectionError_(frames.PROTOCOL_ERROR, "CONTINUATION without HEADERS")
        elif kind == frames.PRIORITY and len(payload) != 5:
            raise ConnectionError_(frames.FRAME_SIZE_ERROR, "a PRIORITY frame not 5 bytes")
        # other frame types are ignored (RFC 9113 section 4.1)

    def _settings(self, settings: list[tuple[int, int]]) -> None:
        for key, value in settings:
            if key == frames.SETTINGS_MAX_CONCURRENT_STREAMS:
                self.max_streams = value
            elif key == frames.SETTINGS_INITIAL_WINDOW_SIZE:
                if value > frames.MAX_WINDOW:
                    raise ConnectionError_(
                        frames.FLOW_CONTROL_ERROR, "INITIAL_WINDOW_SIZE over 2^31-1"
                    )
                delta = value - self.peer_window
                self.peer_window = value
                for stream in self.streams.values():
                    stream.send_window += delta
            elif key == frames.SETTINGS_MAX_FRAME_SIZE:
                if not frames.DEFAULT_MAX_FRAME_SIZE <= value <= 2**24 - 1:
                    raise ConnectionError_(frames.PROTOCOL_ERROR, f"MAX_FRAME_SIZE {value}")
                self.peer_frame = value
            elif key == frames.SETTINGS_ENABLE_PUSH and value > 1:
                raise ConnectionError_(frames.PROTOCOL_ERROR, f"ENABLE_PUSH {value}")
            elif key == frames.SETTINGS_HEADER_TABLE_SIZE:
                self.encoder.table_size(value)
        self._write(frames.frame(frames.SETTINGS, frames.ACK, 0))
        if not self.ready.done():
            self.ready.set_result(None)
        self._unblock()
        self._start_pending()

    def _window_update(self, stream_id: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise ConnectionError_(frames.FRAME_SIZE_ERROR, "a WINDOW_UPDATE not 4 bytes")
        increment = int.from_bytes(payload, "big") & 0x7FFFFFFF
        if stream_id == 0:
            if increment == 0:
                raise ConnectionError_(frames.PROTOCOL_ERROR, "a WINDOW_UPDATE of 0")
            self.send_window += increment
            if self.send_window > frames.MAX_WINDOW:
                raise ConnectionError_(frames.FLOW_CONTROL_ERROR, "connection window over 2^31-1")
        else:
            stream = self.streams.get(stream_id)
            if stream is None:
                return
            if increment == 0:
                self._stream_error(stream, "a WINDOW_UPDATE of 0")
                return
            stream.send_window += increment
            if stream.send_window > frames.MAX_WINDOW:
                self._stream_error(stream, "stream window over 2^31-1")
                return
        self._unblock()

    def _unblock(self) -> None:
        for _ in range(len(self.blocked)):
            if self.send_window <= 0:
                return
            stream = self.blocked.popleft()
            if not stream.done:
                self._send_unsent(stream)

    def _rst_stream(self, stream_id: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise ConnectionError_(frames.FRAME_SIZE_ERROR, "an RST_STREAM not 4 bytes")
        if stream_id == 0:
            raise ConnectionError_(frames.PROTOCOL_ERROR, "RST_STREAM on stream 0")
        stream = self.streams.pop(stream_id, None)
        if stream is None:
            self._unknown_stream(stream_id)
            return
        code = int.from_bytes(payload, "big")
        if stream in self.blocked:
            self.blocked.remove(stream)
        if code == frames.REFUSED_STREAM and stream.retryable and self.owner is not None:
            stream.retryable = False  # never processed: send it again, once
            stream.id = 0
            self.owner.resend([stream])
        elif code == frames.CANCEL and time.monotonic() >= stream.deadline:
            # The server's deadline fired (grpc-go resets with CANCEL): past the call's
            # own deadline grpc reports it as the deadline, and so does this.
            finish(stream, status.DEADLINE_EXCEEDED, "Deadline Exceeded")
        else:
            finish(stream, status.from_rst_stream(code), f"RST_STREAM with error code {code}")
        self._after_close()

    def _goaway(self, last: int, code: int, debug: str) -> None:
        """No new streams here; the ones above ``last`` were not processed: resend them."""
        self.goaway_code = code
        if code == frames.ENHANCE_YOUR_CALM and "too_many_pings" in debug and self.owner:
            # gRFC A8: the server's policy refused our pings; ping half as often from
            # now on (the owner's next connections read it).
            owner: Any = self.owner
            if getattr(owner, "keepalive_s", 0.0):
                owner.keepalive_s *= 2
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
            if stream in self.blocked:
                self.blocked.remove(stream)
            if stream.retryable and self.owner is not None:
                stream.retryable = False
                stream.id = 0
                stream.headers_seen = False
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
            if not stream.done:
                self._open(stream)

    def _after_close(self) -> None:
        if self.pending:
            self._start_pending()
        if self.draining and not self.streams and not self.closed and self.transport:
            self.closed = True
            self._flush()
            self.transport.close()

    # --- deadlines ------------------------------------------------------------------

    def note_timeout(self, timeout_s: float) -> None:
        """Calls with one timeout expire in the order they started (``deadlines``)."""
        self.deadlines.note_timeout(timeout_s)

    # --- out and teardown -------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        self.out.append(data)
        if not self.flush_scheduled:
            self.flush_scheduled = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self.flush_scheduled = False
        if self.out and self.transport is not None and not self.transport.is_closing():
            data = b"".join(self.out) if len(self.out) > 1 else self.out[0]
            self.transport.write(data)
        self.out.clear()

    def fail(self, code: int, reason: str) -> None:
        """The peer broke the protocol: GOAWAY with the error, then close."""
        if self.closed:
            return
        self.close_reason = f"the server broke HTTP/2: {reason}"
        if self.transport is not None:
            self._write(frames.goaway(0, code, reason.encode()[:100]))
            self._flush()
            self.transport.close()
        self._closed(self.close_reason)

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self._write(frames.goaway(0, frames.NO_ERROR))
            self._flush()
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
        if self.pinger is not None:
            self.pinger.cancel()
            self.pinger = None
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
