"""One call on the wire: a ``WireStream``, the callback that ends it, and who owns it.

A stream's life, as RFC 9113 names its states, is read from three fields rather
than kept as a fourth that could disagree with them: ``id`` 0 is *idle* (pending,
or queued to be sent again elsewhere); ``local_closed`` is *half-closed (local)*
(our END_STREAM sent); ``done`` is *closed* (``finish`` ran ``on_done`` once, with
``status`` and ``message`` set). ``headers_seen`` says whether the reply's headers
came (so the next header block is its trailers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from grpcbench.wire import status
from grpcbench.wire.headers import HeaderInfo, RequestFields

if TYPE_CHECKING:
    from grpcbench.wire.connection import Connection


class StreamOwner(Protocol):
    """The channel a connection belongs to."""

    def resend(self, streams: list[WireStream]) -> None:
        """Calls this connection will not carry (GOAWAY, exhausted ids): send them elsewhere."""

    def connection_closed(self, connection: Connection) -> None: ...


class WireStream:
    """One call: what to send, what came back, and the callback that ends it."""

    __slots__ = (
        "id", "request", "body", "end", "on_message", "on_done", "on_headers", "deadline",
        "started", "send_window", "unsent", "unsent_at", "unsent_end", "recv_used", "parts",
        "have", "wanted", "headers_seen", "http_status", "encoding", "status", "message",
        "messages", "bytes", "done", "retryable", "initial_metadata", "trailing_metadata",
        "tag", "lane", "local_closed", "connection", "first_at",
    )  # fmt: skip

    def __init__(
        self,
        request: RequestFields,
        body: bytes,
        end: bool,
        on_done: Callable[[WireStream], None],
        deadline: float,
        on_message: Callable[[bytes], None] | None = None,
    ) -> None:
        self.id = 0
        self.request = request  # the request's header fields (encoded as the stream opens)
        self.body = body  # length-prefixed request messages sent with the headers
        self.end = end  # whether the body ends the request (END_STREAM)
        self.on_done = on_done
        self.on_message = on_message
        self.on_headers: Callable[[WireStream], None] | None = None
        self.deadline = deadline  # a time.monotonic() value (not loop.time(): see deadlines)
        self.started = 0  # for the caller's timing
        self.send_window = 0
        # Request bytes the windows held back: ``unsent[unsent_at:]`` (an offset, so a
        # large request is sent frame by frame without copying what is left each time).
        self.unsent = b""
        self.unsent_at = 0
        self.unsent_end = False
        self.recv_used = 0
        # A reply message that spans DATA frames, kept as its pieces (joined once, when
        # whole): ``have`` bytes so far of ``wanted`` (0 until its 5-byte prefix is in).
        self.parts: list[bytes] = []
        self.have = 0
        self.wanted = 0
        self.headers_seen = False
        self.http_status = 0
        self.encoding = b""
        self.status = -1
        self.message = ""
        self.messages = 0
        self.bytes = 0  # reply message bytes (without the 5-byte prefixes; inflated if compressed)
        self.first_at = 0.0  # time.perf_counter() when the first reply message was complete
        self.done = False
        self.retryable = end  # a whole request that was never processed may be sent again
        self.initial_metadata: HeaderInfo | None = None
        self.trailing_metadata: HeaderInfo | None = None
        self.tag: Any = None  # the caller's
        self.lane = 0  # the caller's: which of its channels carries the call
        self.local_closed = False  # END_STREAM sent
        self.connection: Connection | None = None  # the one it was opened on


def finish(stream: WireStream, code: int, message: str = "") -> None:
    """End a call once; later events for it are ignored."""
    if stream.done:
        return
    stream.done = True
    stream.status = code
    stream.message = message
    stream.on_done(stream)


EXTRA_REPLY = "the server sent more than one reply to a unary call"


def unary_outcome(stream: WireStream) -> tuple[int, str]:
    """A unary call's status and message on the callback loops, as the awaitable API
    gives them: OK with no message is OK (grpc.aio returns None); OK with two is
    Internal (EXTRA_REPLY: grpc-go's cardinality violation; grpc core would wait
    for the deadline instead)."""
    if stream.status == status.OK and stream.messages > 1:
        return status.INTERNAL, EXTRA_REPLY
    return stream.status, stream.message


def message_prefix(length: int, compressed: bool = False) -> bytes:
    return (b"\x01" if compressed else b"\x00") + length.to_bytes(4, "big")
