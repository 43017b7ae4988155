"""Calls out on one HTTP/2 connection: HEADERS and DATA sent, a unary request's kept
frames, the queue behind MAX_CONCURRENT_STREAMS, and our cancels."""

from __future__ import annotations

import contextlib

from grpcbench.wire import frames, status
from grpcbench.wire.connection_core import ConnectionCore
from grpcbench.wire.header_blocks import split_block
from grpcbench.wire.headers import RequestFrames
from grpcbench.wire.stream import (
    CLOSED,
    HALF_CLOSED_LOCAL,
    IDLE,
    OPEN,
    StreamStateError,
    WireStream,
    finish,
    opened,
)
from grpcbench.wire.writer import prefix


class CallsOut(ConnectionCore):
    """Send calls, queue them behind the peer's limit, cancel them (``connection_core``)."""

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
        the steps of ``start``, ``Deadlines.watch``, ``_open`` and ``_send_kept`` inline:
        three Python calls fewer are 1,000 of a call's 42,000 instructions (``nox -s
        loadgen``). Anything else takes ``start``; tests/test_wire_fast_paths.py holds
        the two to the same bytes, states and deadline timer."""
        unary = self.encoder.unary.get(stream.request)
        flow = self.send_flow
        stream_id = self.next_id
        body = stream.body
        if (
            unary is None
            or not stream.end  # kept frames end the request
            or len(self.streams) >= self.max_streams
            or stream_id > frames.MAX_STREAM_ID
            or unary.length > flow.window
            or not (unary.body is body or unary.body == body)
        ):
            self.start(stream)
            return
        deadlines = self.deadlines  # Deadlines.watch
        deadline = stream.deadline
        if deadline >= deadlines.latest:
            deadlines.latest = deadline
        else:
            deadlines.ordered = False
        if deadline < deadlines.due:
            deadlines._set(deadline)
        self.next_id = stream_id + 2
        self.keepalive.pings_without_data = 0
        self.streams[stream_id] = stream
        flow.window -= unary.length  # _send_kept
        stream.send_window = flow.stream_window - unary.length
        if stream.state != IDLE:  # the table's only source of opened(END_STREAM)
            raise StreamStateError(stream_id, "opened(END_STREAM)", stream.state)
        stream.state = HALF_CLOSED_LOCAL  # transition: opened(END_STREAM) from IDLE
        stream.id = stream_id
        stream.connection = self
        sid = stream_id.to_bytes(4, "big")
        self._write(unary.head + sid + unary.middle + sid + body)

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
            and stream.end  # kept frames end the request: not for one still open
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
