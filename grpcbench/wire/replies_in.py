"""Reply frames on one HTTP/2 connection's general path: DATA, HEADERS, CONTINUATION
and trailers. The common cases are inline in ``Connection.data_received``;
tests/test_wire_fast_paths.py holds the two paths to the same outcomes."""

from __future__ import annotations

import random

from grpcbench.wire import frames, messages, status
from grpcbench.wire.connection_core import ConnectionCore
from grpcbench.wire.flow_control import (
    CONNECTION_WINDOW,
    CREDIT_AT,
    STREAM_CREDIT_AT,
)
from grpcbench.wire.frames import ConnectionError_
from grpcbench.wire.header_blocks import ContinuedBlock
from grpcbench.wire.headers import (
    METADATA_SOFT_LIMIT,
    metadata_refusal,
)
from grpcbench.wire.stream import (
    CLOSED,
    OPEN,
    WireStream,
    finish,
)


def http_error(http_status: int) -> str:
    """grpc's text for a reply whose HTTP status is not 200."""
    return f"Received http2 header with status: {http_status}"


class RepliesIn(ConnectionCore):
    """What reply frames do to the calls (``connection_core``)."""

    def _data(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id == 0:
            raise ConnectionError_(frames.PROTOCOL_ERROR, "DATA on stream 0")
        # Flow control in (``flow_control``), inline: this runs for every reply.
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
            problem = messages.received(stream, payload, self.max_recv, self.received_at)
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
