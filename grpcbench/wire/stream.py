"""One call on the wire: a ``WireStream``, its state machine, and who owns it.

A stream's life is an explicit state (RFC 9113 section 5.1, as a client that never
takes a push sees it), changed only through the table ``TRANSITIONS`` (as h2's
``stream.py`` is driven by its table): each transition function looks its next
state up in ``NEXT`` by (state, event), and an event the table does not allow from
the stream's state raises ``StreamStateError``, a connection error, in every mode
(``python -O`` included). Three hot paths of ``connection`` take a transition inline;
each is guarded by the state it comes from, and marked ``# transition: EVENT from
STATE``, which tests/test_wire_stream_states.py holds to the table. The frame
fuzzer of tests/test_wire_frames.py drives every path through them:

    IDLE --opened--> OPEN --end_sent--> HALF_CLOSED_LOCAL
    IDLE --opened(END_STREAM)--> HALF_CLOSED_LOCAL
    OPEN, HALF_CLOSED_LOCAL --requeued--> IDLE       (not processed: sent again elsewhere)
    IDLE, OPEN, HALF_CLOSED_LOCAL --finish--> CLOSED (on_done runs once, status set)

There is no *half-closed (remote)*: a gRPC server that ends its side has ended the
call (its trailers carry the status), so the call is CLOSED at once and a request
still open is reset. ``headers_seen`` is the reply's own progress within a state:
whether its headers came, so that the next header block is its trailers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from grpcbench.wire import status
from grpcbench.wire.frames import INTERNAL_ERROR, ConnectionError_
from grpcbench.wire.headers import HeaderInfo, RequestFields

if TYPE_CHECKING:
    from grpcbench.wire.connection_core import ConnectionCore

IDLE = 0  # on no connection: waiting for one or for a stream slot, or to be resent
OPEN = 1  # HEADERS sent, the request still open (a client or bidi stream)
HALF_CLOSED_LOCAL = 2  # our END_STREAM sent: only replies to come
CLOSED = 3  # ended, for whatever reason: status and message are final

# transition: (the states it may start from, the state it leads to)
TRANSITIONS: dict[str, tuple[frozenset[int], int]] = {
    "opened": (frozenset({IDLE}), OPEN),
    "opened(END_STREAM)": (frozenset({IDLE}), HALF_CLOSED_LOCAL),
    "end_sent": (frozenset({OPEN}), HALF_CLOSED_LOCAL),
    "requeued": (frozenset({OPEN, HALF_CLOSED_LOCAL}), IDLE),
    "finish": (frozenset({IDLE, OPEN, HALF_CLOSED_LOCAL}), CLOSED),
}
# (state, event) -> the next state: what every transition reads.
NEXT: dict[tuple[int, str], int] = {
    (source, event): target
    for event, (sources, target) in TRANSITIONS.items()
    for source in sources
}
STATE_NAMES = {IDLE: "IDLE", OPEN: "OPEN", HALF_CLOSED_LOCAL: "HALF_CLOSED_LOCAL", CLOSED: "CLOSED"}


class StreamStateError(ConnectionError_):
    """An event the table forbids in the stream's state: the transport lost track of
    a stream, so the connection ends (GOAWAY INTERNAL_ERROR) with this reason."""

    def __init__(self, stream_id: int, event: str, state: int) -> None:
        super().__init__(
            INTERNAL_ERROR,
            f"stream {stream_id}: {event} is not allowed in state {STATE_NAMES.get(state, state)}",
        )


def _move(stream: WireStream, event: str) -> None:
    """The one way a transition changes ``stream.state``: through ``NEXT``."""
    try:
        stream.state = NEXT[stream.state, event]
    except KeyError:
        raise StreamStateError(stream.id, event, stream.state) from None


class StreamOwner(Protocol):
    """The channel a connection belongs to."""

    def resend(self, streams: list[WireStream]) -> None:
        """Calls this connection will not carry (GOAWAY, exhausted ids): send them elsewhere."""

    def connection_closed(self, connection: ConnectionCore) -> None: ...


class WireStream:
    """One call: what to send, what came back, and the callback that ends it."""

    __slots__ = (
        "id", "request", "body", "end", "on_message", "on_done", "on_headers", "deadline",
        "started", "send_window", "unsent", "unsent_at", "unsent_end", "recv_used", "parts",
        "have", "wanted", "counting", "headers_seen", "http_status", "encoding", "status",
        "message", "messages", "bytes", "state", "retryable", "initial_metadata",
        "trailing_metadata",
        "tag", "lane", "part", "connection", "first_at", "last_at", "gaps_us", "together",
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
        self.state = IDLE
        self.id = 0  # the HTTP/2 stream id once opened; 0 while IDLE
        self.request = request  # the request's header fields (encoded as the stream opens)
        self.body = body  # length-prefixed request messages sent with the headers
        self.end = end  # whether the body ends the request (END_STREAM)
        self.on_done = on_done
        self.on_message = on_message
        self.on_headers: Callable[[WireStream], None] | None = None
        self.deadline = deadline  # a time.perf_counter() value (not loop.time(): see deadlines)
        self.started = 0  # for the caller's timing
        self.send_window = 0
        # Request bytes the windows held back: ``unsent[unsent_at:]`` (an offset, so a
        # large request is sent frame by frame without copying what is left each time).
        self.unsent = b""
        self.unsent_at = 0
        self.unsent_end = False
        self.recv_used = 0
        # A reply message that spans DATA frames, kept as its pieces (joined once, when
        # whole): ``have`` bytes so far of ``wanted`` (0 until its 5-byte prefix is in);
        # ``counting``: only counted, its pieces not kept (``messages``).
        self.parts: list[bytes] = []
        self.have = 0
        self.wanted = 0
        self.counting = False
        self.headers_seen = False
        self.http_status = 0
        self.encoding = b""
        self.status = -1
        self.message = ""
        self.messages = 0
        self.bytes = 0  # reply message bytes (without the 5-byte prefixes; inflated if compressed)
        self.first_at = 0.0  # time.perf_counter() when the first reply message was complete
        # Gaps between reply messages: timed per socket read (one clock reading each, in
        # Connection.data_received); messages after the first of one read came together.
        self.last_at = 0.0
        self.gaps_us: list[int] | None = None
        self.together = 0
        self.retryable = end  # a whole request that was never processed may be sent again
        self.initial_metadata: HeaderInfo | None = None
        self.trailing_metadata: HeaderInfo | None = None
        self.tag: Any = None  # the caller's
        self.lane = 0  # the caller's: which of its channels carries the call
        self.part = 0  # the caller's: which method of a mix the call is
        self.connection: ConnectionCore | None = None  # the one it was opened on


def opened(stream: WireStream, stream_id: int, connection: ConnectionCore, ended: bool) -> None:
    """HEADERS left on ``connection`` (with the whole request, if ``ended``)."""
    _move(stream, "opened(END_STREAM)" if ended else "opened")
    stream.id = stream_id
    stream.connection = connection


def end_sent(stream: WireStream) -> None:
    """Our END_STREAM left: the request is whole."""
    _move(stream, "end_sent")


def requeued(stream: WireStream) -> None:
    """The server did not process the call (GOAWAY above it, REFUSED_STREAM): it goes
    back to IDLE, once, to be sent again on another connection."""
    _move(stream, "requeued")
    stream.id = 0
    stream.headers_seen = False
    stream.retryable = False


def finish(stream: WireStream, code: int, message: str = "") -> None:
    """End a call once (-> CLOSED); later events for it are ignored."""
    if stream.state == CLOSED:
        return
    _move(stream, "finish")
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
