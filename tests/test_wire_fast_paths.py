"""The wire connection's inline fast paths give what its general paths give.

- ``data_received`` cuts frames inline (as ``frames.FrameSplitter`` does): calls end
  alike however the socket cuts the bytes, with padded DATA, flags HTTP/2 does not
  define, and streams' DATA frames interleaved;
- a unary reply read whole (its DATA frame and trailers at once: ``unary_replies``)
  ends its call as the same bytes one frame a read do;
- a unary request sent again on a connection is its first frames with a new stream
  id (``headers.RequestFrames``), the block the encoder would give; another body
  is framed anew (and a request still open never), and the peer's new settings drop
  what was kept;
- writes leave once 8 are queued, and the rest when the loop iteration ends;
- a PING answered and the connection's WINDOW_UPDATE taken inline do what
  ``control_in`` does.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import hpack
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grpcbench.wire import frames, status
from grpcbench.wire.connection import Connection
from grpcbench.wire.flow_control import CONNECTION_WINDOW, CREDIT_AT, STREAM_CREDIT_AT
from grpcbench.wire.headers import request_fields
from grpcbench.wire.stream import OPEN, WireStream
from grpcbench.wire.writer import EARLY_FLUSH, FrameWriter
from tests.support.memory_transport import MemoryTransport


def _connection() -> tuple[Connection, MemoryTransport]:
    transport = MemoryTransport()
    connection = Connection()
    connection.connection_made(transport)  # type: ignore[arg-type]
    connection._settings([])
    return connection, transport


FIELDS = request_fields("/a.B/C", "127.0.0.1:1", "http", None)


def _replies(calls: list[tuple[int, list[bytes], int]], interleaved: bool = False) -> bytes:
    """Each call's reply (stream 1, 3, ...): headers, its messages one DATA frame each
    (with ``pad`` bytes of padding when above 0; with -1, a flag HTTP/2 does not define,
    which must be ignored), trailers with its status; with -2, the last DATA frame ends
    the stream instead (grpc: Internal). ``interleaved``: every call's
    headers, then their DATA frames in turn, one of each stream at a time (as a server
    sends concurrent streams), then the trailers."""
    ids = [2 * index + 1 for index in range(len(calls))]
    datas = []
    for sid, (_, bodies, pad) in zip(ids, calls, strict=True):
        data = []
        for number, body in enumerate(bodies, 1):
            message = b"\x00" + len(body).to_bytes(4, "big") + body
            if pad == -1:
                data.append(frames.frame(frames.DATA, 0x20, sid, message))
            elif pad == -2:  # the last ends the stream, with no trailers
                flags = frames.END_STREAM if number == len(bodies) else 0
                data.append(frames.frame(frames.DATA, flags, sid, message))
            elif pad:
                payload = bytes([pad]) + message + b"\x00" * pad
                data.append(frames.frame(frames.DATA, frames.PADDED, sid, payload))
            else:
                data.append(frames.frame(frames.DATA, 0, sid, message))
        datas.append(data)
    encoder = hpack.Encoder()  # blocks encoded in the order they are sent (its table)

    def head(sid: int) -> bytes:
        block = encoder.encode([(":status", "200"), ("content-type", "application/grpc")])
        return frames.frame(frames.HEADERS, frames.END_HEADERS, sid, block)

    def tail(sid: int, code: int) -> bytes:
        if code < 0:
            return b""  # the stream ended with its last DATA frame
        block = encoder.encode([("grpc-status", str(code))])
        return frames.frame(frames.HEADERS, frames.END_HEADERS | frames.END_STREAM, sid, block)

    codes = [-1 if pad == -2 and bodies else code for code, bodies, pad in calls]
    if not interleaved:
        return b"".join(
            b"".join([head(sid), *data, tail(sid, code)])
            for sid, data, code in zip(ids, datas, codes, strict=True)
        )
    heads = [head(sid) for sid in ids]
    turns = [data[turn] for turn in range(3) for data in datas if turn < len(data)]
    tails = [tail(sid, code) for sid, code in zip(ids, codes, strict=True)]
    return b"".join([*heads, *turns, *tails])


Outcome = tuple[int, int, str, int, int]  # stream id, status, message, messages, bytes


def _outcomes(
    calls: list[tuple[int, list[bytes], int]], cuts: list[int], interleaved: bool = False
) -> list[Outcome]:
    async def run() -> list[Outcome]:
        connection, _ = _connection()
        ended: list[WireStream] = []
        for _ in calls:
            connection.start(WireStream(FIELDS, b"\x00" * 5, True, ended.append, math.inf))
        wire = _replies(calls, interleaved)
        position = 0
        for cut in cuts:
            connection.data_received(wire[position : position + cut])
            position += cut
        connection.data_received(wire[position:])
        outcomes = sorted((s.id, s.status, s.message, s.messages, s.bytes) for s in ended)
        # the connection window's use: every DATA payload, padding included
        return [*outcomes, (connection.recv_used, 0, "", 0, 0)]

    return asyncio.run(run())


call_values = st.tuples(
    st.sampled_from([status.OK, status.NOT_FOUND]),
    st.lists(st.binary(max_size=200), max_size=3),
    st.sampled_from([0, 0, 7, -1, -2]),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(call_values, min_size=1, max_size=5),
    st.lists(st.integers(1, 40), max_size=30),
    st.booleans(),
)
def test_calls_end_alike_however_the_socket_cuts_the_bytes(
    calls: list[tuple[int, list[bytes], int]], cuts: list[int], interleaved: bool
) -> None:
    whole = _outcomes(calls, [], interleaved)
    assert _outcomes(calls, cuts, interleaved) == whole
    for (code, bodies, pad), (_, got, _, count, size) in zip(calls, whole[:-1], strict=True):
        if pad == -2 and bodies:
            code = status.INTERNAL  # "the server ended the stream without trailers"
        assert (got, count, size) == (code, len(bodies), sum(map(len, bodies)))
    used = sum(
        5 + len(body) + (1 + pad if pad > 0 else 0) for _, bodies, pad in calls for body in bodies
    )
    assert whole[-1][0] == used


def test_a_run_of_data_frames_gives_both_windows_back_once_they_are_half_used() -> None:
    """The read loop counts a run of DATA frames in one pass and settles the windows
    after it: WINDOW_UPDATE for the connection and the stream once our credit points
    (``flow.CREDIT_AT``, ``STREAM_CREDIT_AT``) are passed, each for all that was read."""

    async def run() -> tuple[list[tuple[int, int, int, bytes]], WireStream, Connection]:
        connection, transport = _connection()
        stream = WireStream(FIELDS, b"\x00" * 5, True, lambda s: None, math.inf)
        connection.start(stream)
        connection.writer.flush()
        transport.written.clear()
        head = hpack.Encoder().encode([(":status", "200"), ("content-type", "application/grpc")])
        connection.data_received(frames.frame(frames.HEADERS, frames.END_HEADERS, 1, head))
        connection.recv_used = CREDIT_AT - 100  # as if nearly a quarter of the window went
        stream.recv_used = STREAM_CREDIT_AT - 100
        message = b"\x00" + (45).to_bytes(4, "big") + b"x" * 45
        connection.data_received(b"".join(frames.frame(frames.DATA, 0, 1, message)
                                          for _ in range(4)))  # fmt: skip
        connection.writer.flush()
        return frames.FrameSplitter().split(b"".join(transport.written)), stream, connection

    sent, stream, connection = asyncio.run(run())
    increments = [(f[2], int.from_bytes(f[3], "big")) for f in sent if f[0] == frames.WINDOW_UPDATE]
    assert increments == [(0, CREDIT_AT + 100), (1, STREAM_CREDIT_AT + 100)]
    assert (connection.recv_used, stream.recv_used) == (0, 0)
    assert (stream.messages, stream.bytes) == (4, 180)


def _sent(transport: MemoryTransport) -> list[tuple[int, int, int, bytes]]:
    """The HEADERS and DATA frames written after the connection's preface."""
    splitter = frames.FrameSplitter()
    wire = b"".join(transport.written)[len(frames.PREFACE) :]
    return [f for f in splitter.split(wire) if f[0] in (frames.HEADERS, frames.DATA)]


def test_a_run_of_data_frames_past_our_connection_window_breaks_the_connection() -> None:
    """As frame by frame (``_data``): DATA beyond the window we gave is the peer's
    FLOW_CONTROL_ERROR, and the call on it ends Unavailable with the reason."""

    async def run() -> tuple[list[tuple[int, int, int, bytes]], WireStream, Connection]:
        connection, transport = _connection()
        stream = WireStream(FIELDS, b"\x00" * 5, True, lambda s: None, math.inf)
        connection.start(stream)
        head = hpack.Encoder().encode([(":status", "200"), ("content-type", "application/grpc")])
        connection.data_received(frames.frame(frames.HEADERS, frames.END_HEADERS, 1, head))
        connection.recv_used = CREDIT_AT - 100  # below the credit point: the fast path
        message = b"\x00" + (45).to_bytes(4, "big") + b"x" * 45
        run = frames.frame(frames.DATA, 0, 1, message) * (
            (CONNECTION_WINDOW - CREDIT_AT) // 50 + 10
        )
        connection.data_received(run)  # one read: far larger than a socket gives
        written = b"".join(transport.written)[len(frames.PREFACE) :]
        return frames.FrameSplitter().split(written), stream, connection

    sent, stream, connection = asyncio.run(run())
    goaway = [f for f in sent if f[0] == frames.GOAWAY]
    assert (
        len(goaway) == 1 and int.from_bytes(goaway[0][3][4:8], "big") == frames.FLOW_CONTROL_ERROR
    )
    assert connection.closed and stream.status == status.UNAVAILABLE
    assert "DATA beyond our connection window" in stream.message


def test_a_repeated_unary_request_is_its_frames_again_with_its_own_stream_id() -> None:
    async def run() -> tuple[Connection, list[tuple[int, int, int, bytes]], int]:
        connection, transport = _connection()
        for letter in b"aab":  # the second body equal to the first, not the same object
            body = b"\x00\x00\x00\x00\x01" + bytes([letter])
            connection.start(WireStream(FIELDS, body, True, lambda s: None, math.inf))
        connection.writer.flush()
        kept = len(connection.encoder.unary)
        # The peer's new frame size (or window) drops what was framed for the old ones.
        connection._settings([(frames.SETTINGS_MAX_FRAME_SIZE, 20_000)])
        return connection, _sent(transport), kept

    connection, sent, kept = asyncio.run(run())
    headers = [f for f in sent if f[0] == frames.HEADERS]
    data = [f for f in sent if f[0] == frames.DATA]
    assert [f[2] for f in headers] == [1, 3, 5] and [f[2] for f in data] == [1, 3, 5]
    # the first block fills the table; every later one is the steady block, kept once
    steady = connection.encoder.cache[FIELDS.key]
    assert headers[1][3] == headers[2][3] == steady != headers[0][3]
    assert all(f[1] == frames.END_HEADERS for f in headers)
    assert [f[3][-1:] for f in data] == [b"a", b"a", b"b"]  # the other body, framed anew
    assert all(f[1] == frames.END_STREAM for f in data)
    assert kept == 1 and not connection.encoder.unary


def test_start_unary_sends_and_tracks_calls_as_start_does() -> None:
    """The callback loops' ``start_unary`` is ``start`` with its steps inline: the same
    bytes leave, each stream ends in the same state, the deadline timer is due at the
    same time, and past MAX_CONCURRENT_STREAMS the call waits in ``pending`` alike."""

    async def run(use_inline: bool) -> tuple[list[tuple[int, int, int, bytes]], list[tuple]]:
        connection, transport = _connection()
        connection.max_streams = 4
        streams = []
        for number in range(6):
            body = b"\x00\x00\x00\x00\x01" + (b"b" if number == 2 else b"a")
            stream = WireStream(FIELDS, body, True, lambda s: None, 100.0 - number)
            streams.append(stream)
            (connection.start_unary if use_inline else connection.start)(stream)
        connection.writer.flush()
        state = [
            (s.state, s.id, s.send_window, s.connection is connection, s.retryable) for s in streams
        ]
        timer = connection.deadlines
        state.append((len(connection.pending), timer.due, timer.latest, timer.ordered))
        state.append((connection.next_id, connection.send_flow.window))
        connection.deadlines.cancel()
        return _sent(transport), state

    inline_sent, inline_state = asyncio.run(run(True))
    plain_sent, plain_state = asyncio.run(run(False))
    assert inline_sent == plain_sent
    assert inline_state == plain_state
    assert inline_state[-2] == (2, 95.0, 100.0, False)  # two pending; deadlines not in order


def test_writes_leave_every_eight_and_at_the_end_of_the_loop_iteration() -> None:
    """20 writes in one iteration: two writes of 8 at once (the server starts on them
    while the client reads on), the last 4 when the iteration ends; order kept."""

    async def run() -> tuple[list[bytes], list[bytes]]:
        transport = MemoryTransport()
        writer = FrameWriter(asyncio.get_running_loop())
        writer.transport = transport  # type: ignore[assignment]
        for number in range(20):
            writer.write(bytes([number]))
        during = list(transport.written)
        await asyncio.sleep(0)
        return during, transport.written

    during, written = asyncio.run(run())
    assert EARLY_FLUSH == 8
    assert during == [bytes(range(8)), bytes(range(8, 16))]
    assert written == [*during, bytes(range(16, 20))]


def test_connections_on_one_loop_share_one_end_of_iteration_callback() -> None:
    """Three connections' writes in one iteration leave when it ends, each connection's
    in one write and in order, from one callback for all (not one per connection: with
    1,000 connections of one call each, that was a call_soon per call)."""

    async def run() -> tuple[list[list[bytes]], list[list[bytes]], int]:
        loop = asyncio.get_running_loop()
        transports = [MemoryTransport() for _ in range(3)]
        writers = [FrameWriter(loop) for _ in transports]
        for writer, transport in zip(writers, transports, strict=True):
            writer.transport = transport  # type: ignore[assignment]
        scheduled = 0
        call_soon = loop.call_soon

        def counted(*args: Any, **kwargs: Any) -> Any:
            nonlocal scheduled
            scheduled += 1
            return call_soon(*args, **kwargs)

        loop.call_soon = counted  # type: ignore[method-assign]
        try:
            for number in range(6):
                writers[number % 3].write(bytes([number]))
        finally:
            loop.call_soon = call_soon  # type: ignore[method-assign]
        during = [list(t.written) for t in transports]
        await asyncio.sleep(0)
        return during, [t.written for t in transports], scheduled

    during, written, scheduled = asyncio.run(run())
    assert during == [[], [], []]
    assert written == [[bytes([0, 3])], [bytes([1, 4])], [bytes([2, 5])]]
    assert scheduled == 1


reply_values = st.tuples(
    st.sampled_from([status.OK, status.OK, status.OK, status.NOT_FOUND]),
    st.lists(st.binary(max_size=40), min_size=0, max_size=2),
    st.booleans(),  # the messages' compressed flag
    st.sampled_from(["", "", "done"]),  # grpc-message in the trailers
    st.booleans(),  # the request still open (a client stream's)
    st.booleans(),  # the stream's window nearly due for credit
)
Reply = tuple[int, list[bytes], bool, str, bool, bool]


def _unary_wire(calls: list[Reply]) -> bytes:
    """Each call's reply on stream 1, 3, ...: headers, one DATA frame per message, and
    trailers, encoded in order (one hpack table), as a server writes them together."""
    encoder = hpack.Encoder()
    out = []
    for number, (code, bodies, compressed, text, _, _) in enumerate(calls):
        sid = 2 * number + 1
        block = encoder.encode([(":status", "200"), ("content-type", "application/grpc")])
        out.append(frames.frame(frames.HEADERS, frames.END_HEADERS, sid, block))
        for body in bodies:
            prefix = (b"\x01" if compressed else b"\x00") + len(body).to_bytes(4, "big")
            out.append(frames.frame(frames.DATA, 0, sid, prefix + body))
        # (a long message never indexed, so its block leaves the table alone and is
        # cached: trailers over grpc's metadata limit, not plain, come to the fast paths)
        message = hpack.NeverIndexedHeaderTuple("grpc-message", text) if text else None
        fields = [("grpc-status", str(code))] + ([message] if message else [])
        flags = frames.END_HEADERS | frames.END_STREAM
        out.append(frames.frame(frames.HEADERS, flags, sid, encoder.encode(fields)))
    return b"".join(out)


def _unary_ends(
    calls: list[Reply], limit: int, connection_credit: bool, byte_by_byte: bool
) -> list[tuple[Any, ...]]:
    """What every call ended with, and the connection's window use, after the replies
    came in one read or one byte a read (then each frame comes alone)."""

    async def run() -> list[tuple[Any, ...]]:
        connection, transport = _connection()
        connection.max_recv = limit
        ended: list[WireStream] = []
        for _, bodies, _, _, open_request, near_credit in calls:
            stream = WireStream(FIELDS, b"\x00" * 5, not open_request, ended.append, math.inf)
            connection.start(stream)
            # (a run of DATA frames in one read settles its credit once, after the run:
            # the test above; so credit comes due only on calls of one message here)
            stream.recv_used = STREAM_CREDIT_AT - 20 if near_credit and len(bodies) < 2 else 0
        connection.recv_used = CREDIT_AT - 200 if connection_credit else 0
        wire = _unary_wire(calls)
        if byte_by_byte:
            for at in range(len(wire)):
                connection.data_received(wire[at : at + 1])
        else:
            connection.data_received(wire)
        connection.deadlines.cancel()
        ends = [
            (s.id, s.state, s.status, s.message, s.messages, s.bytes, s.recv_used,
             # (messages after a call's first came together only where one read held them)
             (s.together, s.first_at == s.last_at) if s.messages < 2 else None,
             s.headers_seen, s.http_status,
             s.trailing_metadata.grpc_status if s.trailing_metadata else None)
            for s in ended
        ]  # fmt: skip
        connection.writer.flush()
        wrote = frames.FrameSplitter().split(b"".join(transport.written)[len(frames.PREFACE) :])
        replies = [f for f in wrote if f[0] in (frames.RST_STREAM, frames.WINDOW_UPDATE)]
        return [*ends, (connection.recv_used, len(connection.streams), connection.closed), replies]

    return asyncio.run(run())


@settings(max_examples=100, deadline=None)
@given(st.lists(reply_values, max_size=8), st.sampled_from([0, 0, 20]), st.booleans())
@example([(status.OK, [b"x" * 30], False, "", False, False)], 20, False)  # over the limit
@example([(status.OK, [b"x"], False, "", True, False)], 0, False)  # the request open
@example([(status.OK, [b"x" * 30], False, "", False, True)], 0, False)  # stream credit due
@example([(status.OK, [b"x" * 30], False, "", False, False)] * 9, 0, True)  # connection's
@example([(status.OK, [b"x"], True, "", False, False)], 0, False)  # compressed
@example([(status.NOT_FOUND, [b"x"], False, "", False, False)] * 4, 0, False)  # not OK, cached
@example([(status.OK, [b"x"], False, "x" * 16300, False, False)] * 4, 0, False)  # not plain
def test_a_unary_reply_read_whole_ends_its_call_as_its_frames_one_by_one(
    calls: list[Reply], limit: int, connection_credit: bool
) -> None:
    """``unary_replies`` reads a reply's DATA frame and trailers at once when the whole
        reply is in one read; one byte a read, the frame loop reads them one by one. Every
        call ends alike (status, message, counts, windows, state, what the connection wrote
    back: RST_STREAM, WINDOW_UPDATE), over replies of any
        size, compressed, with 0 or 2 messages, other statuses, a size limit, a request still
    open and either window's credit due. The first
        three replies are alike, so the trailers' block is cached by the third and the
        whole read takes ``unary_replies`` at least once (counted, so this cannot pass
        with it never taken)."""
    from grpcbench.wire import connection as connection_module
    from grpcbench.wire import unary_replies

    warm: list[Reply] = [(status.OK, [b"hello"], False, "", False, False)] * 3
    if connection_credit:  # as for a stream's credit (``_unary_ends``)
        calls = [call for call in calls if len(call[1]) < 2]
    taken = []

    def counted(*args: Any) -> int:
        end = unary_replies.take_unary_reply(*args)
        taken.append(end >= 0)
        return end

    original = connection_module.take_unary_reply
    connection_module.take_unary_reply = counted  # type: ignore[assignment]
    try:
        whole = _unary_ends(warm + calls, limit, connection_credit, byte_by_byte=False)
    finally:
        connection_module.take_unary_reply = original  # type: ignore[assignment]
    assert any(taken)
    assert whole == _unary_ends(warm + calls, limit, connection_credit, byte_by_byte=True)


def test_a_request_still_open_is_never_sent_as_a_kept_unary_request() -> None:
    """Kept unary frames end the request (END_STREAM): a call of the same fields whose
    request stays open (a client stream's first message equal to a unary body) is
    framed anew, without END_STREAM, and stays OPEN."""

    async def run() -> tuple[list[tuple[int, int, int, bytes]], WireStream]:
        connection, transport = _connection()
        body = b"\x00\x00\x00\x00\x01a"
        for _ in range(2):  # the second keeps the frames (the steady block)
            connection.start(WireStream(FIELDS, body, True, lambda s: None, math.inf))
        still_open = WireStream(FIELDS, body, False, lambda s: None, math.inf)
        connection.start(still_open)
        connection.writer.flush()
        connection.deadlines.cancel()
        return _sent(transport), still_open

    sent, still_open = asyncio.run(run())
    data = [f for f in sent if f[0] == frames.DATA]
    assert [f[2] for f in data] == [1, 3, 5]
    assert [f[1] & frames.END_STREAM for f in data] == [frames.END_STREAM] * 2 + [0]
    assert still_open.state == OPEN


control_frames = st.lists(
    st.one_of(
        st.tuples(
            st.just(frames.PING),
            st.sampled_from([0, 0, frames.ACK, 0x20]),
            st.sampled_from([0, 0, 1]),
            st.one_of(st.binary(min_size=8, max_size=8), st.binary(max_size=9)),
        ),
        st.tuples(
            st.just(frames.WINDOW_UPDATE),
            st.sampled_from([0, 0x20]),
            st.sampled_from([0, 0, 1]),
            st.one_of(
                st.integers(0, 2**32 - 1).map(lambda n: n.to_bytes(4, "big")),
                st.sampled_from([b"\x7f\xff\xff\xff", b"\x00\x00\x00\x00", b"\x00\x01"]),
            ),
        ),
    ),
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(control_frames, st.booleans())
def test_pings_and_window_updates_inline_do_what_control_in_does(
    sent: list[tuple[int, int, int, bytes]], stream_open: bool
) -> None:
    """The frame loop answers a PING and takes the connection's WINDOW_UPDATE inline;
    ``control_in`` does the same frames one call each: the same bytes written back (the
    ACK, a GOAWAY), the same windows, the same connection error, over PINGs and
    WINDOW_UPDATEs of any flags, stream, size and increment (0 and past 2^31-1), with
    and without a call waiting for window."""

    def outcome(inline: bool) -> tuple[Any, ...]:
        async def run() -> tuple[Any, ...]:
            connection, transport = _connection()
            if stream_open:  # a call past the connection's window: it waits for one
                connection._settings([(frames.SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20)])
                body = b"\x00" * 70_000
                connection.start(WireStream(FIELDS, body, False, lambda s: None, math.inf))
            connection.writer.flush()
            transport.written.clear()
            for kind, flags, stream_id, payload in sent:
                if connection.closed:
                    break
                if inline:
                    connection.data_received(frames.frame(kind, flags, stream_id, payload))
                else:
                    try:
                        connection._control(kind, flags, stream_id, payload)
                    except frames.ConnectionError_ as error:
                        connection.fail(error.code, error.reason)
            connection.writer.flush()
            connection.deadlines.cancel()
            windows = [s.send_window for s in connection.streams.values()]
            return (b"".join(transport.written), connection.send_flow.window, windows,
                    connection.closed, connection.close_reason)  # fmt: skip

        return asyncio.run(run())

    assert outcome(inline=True) == outcome(inline=False)
