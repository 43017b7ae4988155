"""The state of one HTTP/2 client connection, which each of its concerns acts on.

``connection.Connection`` is one class put together from one class per concern, each
in a module of its own, all acting on this state (as h2 keeps concerns apart):
- ``calls_out``: calls sent (HEADERS and DATA out, a unary request's kept frames,
  the queue behind MAX_CONCURRENT_STREAMS, our cancels);
- ``replies_in``: reply frames on the general path (DATA, HEADERS, CONTINUATION,
  trailers, a stream the server broke);
- ``control_in``: the control frames (SETTINGS, WINDOW_UPDATE, PING, RST_STREAM,
  GOAWAY) and draining a connection;
- ``connection``: the socket's callbacks, the frame loop with its inline common
  cases, and teardown.
Method lookups through the classes cost nothing per call: CPython caches them per type.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING

from grpcbench.wire import status
from grpcbench.wire.deadlines import Deadlines
from grpcbench.wire.flow_control import SendFlow
from grpcbench.wire.header_blocks import ContinuedBlock
from grpcbench.wire.headers import (
    ReplyHeaderDecoder,
    RequestEncoder,
)
from grpcbench.wire.keepalive import Keepalive
from grpcbench.wire.stream import (
    StreamOwner,
    WireStream,
)
from grpcbench.wire.unary_replies import ReplyTail
from grpcbench.wire.writer import FrameWriter


class ConnectionCore(asyncio.Protocol):
    """What one HTTP/2 client connection knows: its calls, windows, codecs and timers."""

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
        self.send_flow = SendFlow(self.writer.write_pieces, self.keepalive)
        self.blocked = self.send_flow.blocked  # streams waiting for window (``flow_control``)
        self.recv_used = 0  # connection bytes read since our last WINDOW_UPDATE
        self.received_at = 0.0  # perf_counter() of the socket read under way
        self.draining = False  # GOAWAY received or ids exhausted: no new streams
        self.closed = False
        self.close_reason = ""
        self.continued: ContinuedBlock | None = None
        # the layout of the last unary reply's DATA frame and trailers (``unary_replies``)
        self.reply_tail: ReplyTail | None = None
        self.deadlines = Deadlines(
            self.loop,
            lambda: (self.streams.values(), self.pending),
            lambda stream: self.cancel(stream, status.DEADLINE_EXCEEDED, "Deadline Exceeded"),
        )
        self.goaway_code: int | None = None

    if TYPE_CHECKING:  # what the concerns call of one another (each defines its own)

        def start(self, stream: WireStream) -> None: ...
        def cancel(self, stream: WireStream, code: int, message: str) -> None: ...
        def send(self, stream: WireStream, data: bytes, end: bool) -> None: ...
        def _open(self, stream: WireStream) -> None: ...
        def _start_pending(self) -> None: ...
        def _after_close(self) -> None: ...
        def _stream_error(self, stream: WireStream, reason: str) -> None: ...
        def _unknown_stream(self, stream_id: int) -> None: ...
        def _drain(self, reason: str, unprocessed: list[WireStream] | None = None) -> None: ...
        def fail(self, code: int, reason: str) -> None: ...
        def _closed(self, reason: str) -> None: ...
