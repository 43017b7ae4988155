"""Reply messages and deadlines on the wire transport, against a scripted peer in memory.

- messages are delivered whole and in order however DATA frames cut them; a
  message that spans frames is joined once, when its last piece arrives (no copy
  of the bytes so far per frame: that was quadratic in the message's size), and
  one that is only counted is never held;
- a connection's one deadline timer is due at its earliest deadline, whatever the
  order calls start in, and ends exactly the calls whose deadline passed;
- a deadline fires within a millisecond of its time, never before it.
"""

from __future__ import annotations

import asyncio
import math
import time
import tracemalloc

import hpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grpcbench.wire import frames, status
from grpcbench.wire.connection import Connection
from grpcbench.wire.headers import request_fields
from grpcbench.wire.stream import WireStream
from tests.support.memory_transport import MemoryTransport


def _connection() -> Connection:
    connection = Connection()
    connection.connection_made(MemoryTransport())  # type: ignore[arg-type]
    connection._settings([])
    return connection


def _stream(got: list[bytes], ended: list[WireStream], deadline: float = math.inf) -> WireStream:
    return WireStream(
        request_fields("/a.B/C", "127.0.0.1:1", "http", None), b"\x00" * 5, True,
        ended.append, deadline, on_message=got.append,
    )  # fmt: skip


def _reply(bodies: list[bytes], cuts: list[int]) -> list[bytes]:
    """The reply's frames on stream 1: headers, the messages cut into DATA frames of
    the sizes in ``cuts`` (cycled), trailers."""
    encoder = hpack.Encoder()
    data = b"".join(b"\x00" + len(body).to_bytes(4, "big") + body for body in bodies)
    head = encoder.encode([(":status", "200"), ("content-type", "application/grpc")])
    out = [frames.frame(frames.HEADERS, frames.END_HEADERS, 1, head)]
    position, turn = 0, 0
    while position < len(data):
        size = cuts[turn % len(cuts)]
        out.append(frames.frame(frames.DATA, 0, 1, data[position : position + size]))
        position, turn = position + size, turn + 1
    end = frames.END_HEADERS | frames.END_STREAM
    out.append(frames.frame(frames.HEADERS, end, 1, encoder.encode([("grpc-status", "0")])))
    return out


@given(
    st.lists(st.binary(max_size=3000), min_size=1, max_size=6),
    st.lists(st.integers(1, frames.DEFAULT_MAX_FRAME_SIZE), min_size=1, max_size=8),
)
def test_messages_arrive_whole_however_frames_cut_them(
    bodies: list[bytes], cuts: list[int]
) -> None:
    async def run() -> tuple[list[bytes], list[WireStream]]:
        connection, got, ended = _connection(), [], []  # type: ignore[var-annotated]
        connection.start(_stream(got, ended))
        for chunk in _reply(bodies, cuts):
            connection.data_received(chunk)
        return got, ended

    got, ended = asyncio.run(run())
    assert got == bodies
    assert [s.status for s in ended] == [status.OK] and ended[0].messages == len(bodies)
    # Every message after the first is one gap: timed, or with another of its read.
    assert len(ended[0].gaps_us or ()) + ended[0].together == len(bodies) - 1


@given(
    st.lists(st.binary(max_size=40_000), min_size=1, max_size=4),
    st.lists(st.integers(1, 70_000), min_size=1, max_size=8),
)
def test_messages_arrive_whole_however_socket_reads_cut_the_frames(
    bodies: list[bytes], reads: list[int]
) -> None:
    """The reply's bytes cut into socket reads anywhere, frames straddling reads (a
    held frame is completed from the next read's first bytes): the same messages."""
    stream_bytes = b"".join(_reply(bodies, [frames.DEFAULT_MAX_FRAME_SIZE]))

    async def run() -> tuple[list[bytes], list[WireStream]]:
        connection, got, ended = _connection(), [], []  # type: ignore[var-annotated]
        connection.start(_stream(got, ended))
        position, turn = 0, 0
        while position < len(stream_bytes):
            size = reads[turn % len(reads)]
            connection.data_received(stream_bytes[position : position + size])
            position, turn = position + size, turn + 1
        return got, ended

    got, ended = asyncio.run(run())
    assert got == bodies and [s.status for s in ended] == [status.OK]


def test_gaps_between_messages_are_timed_once_per_read() -> None:
    """Three messages in one DATA frame, 20 ms later two more: the first read's
    later messages came with it, and the second read's first is a 20 ms gap."""
    frames_of = _reply([b"a", b"b", b"c", b"d", b"e"], [18, 12])  # 6 bytes a message

    async def run() -> WireStream:
        connection, got, ended = _connection(), [], []  # type: ignore[var-annotated]
        connection.start(_stream(got, ended))
        head, first, second, trailers = frames_of
        for chunk in (head, first):
            connection.data_received(chunk)
        await asyncio.sleep(0.02)
        for chunk in (second, trailers):
            connection.data_received(chunk)
        assert got == [b"a", b"b", b"c", b"d", b"e"]
        return ended[0]

    stream = asyncio.run(run())
    assert stream.together == 3 and stream.gaps_us is not None and len(stream.gaps_us) == 1
    assert 20_000 <= stream.gaps_us[0] < 1_000_000


@pytest.mark.parametrize("delivered", [True, False], ids=["delivered", "counted"])
def test_a_large_message_is_copied_once_when_delivered_and_never_held_when_counted(
    delivered: bool,
) -> None:
    """An 8 MiB reply in 16 KiB frames. Delivered: its pieces, then one join (at most
    twice the message in memory). Only counted: never held (a few frames; it once was
    joined, as a delivered one)."""
    body = bytes(range(256)) * (8 << 12)
    chunks = _reply([body], [frames.DEFAULT_MAX_FRAME_SIZE])

    async def run() -> tuple[list[bytes], list[WireStream], int]:
        connection, got, ended = _connection(), [], []  # type: ignore[var-annotated]
        stream = _stream(got, ended)
        if not delivered:
            stream.on_message = None
        connection.start(stream)
        tracemalloc.start()
        try:
            for chunk in chunks:
                connection.data_received(chunk)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return got, ended, peak

    got, ended, peak = asyncio.run(run())
    assert ended[0].status == status.OK and ended[0].messages == 1
    assert ended[0].bytes == len(body)
    if delivered:
        assert got == [body] and peak < 2.2 * len(body)
    else:
        assert got == [] and peak < 1 << 20


def test_the_deadline_timer_is_due_at_the_earliest_deadline() -> None:
    """Calls with mixed timeouts, opened latest-deadline first: the timer is due at the
    earliest; when it fires it ends only the calls past their deadline, and is set
    again for the next one."""

    async def run() -> tuple[list[str], list[float]]:
        connection = _connection()
        now = time.perf_counter()  # the clock deadlines are on
        ended: list[WireStream] = []
        streams = [_stream([], ended, now + offset) for offset in (5.0, 0.02, 0.01, 60.0)]
        for stream in streams:
            connection.start(stream)
        dues = [connection.deadlines.due - now]
        await asyncio.sleep(0.2)  # both short deadlines passed; the timer fired
        dues.append(connection.deadlines.due - now)
        connection.abort()
        return [f"{s.deadline - now:g} {s.message}" for s in ended[:2]], dues

    expired, dues = asyncio.run(run())
    assert expired == ["0.01 Deadline Exceeded", "0.02 Deadline Exceeded"]
    assert [round(due, 6) for due in dues] == [0.01, 5.0]


def test_a_deadline_is_timed_for_its_own_moment_and_never_fires_early() -> None:
    """Calls of 1 to 10 ms to a peer that never answers, on both event loops: while a
    call is open the connection's one timer is due at its deadline (not on a sweep),
    and each ends DeadlineExceeded, none before its deadline. How late they end is a
    figure load can move, so it is measured, not asserted: ``nox -s deadlines``."""
    import uvloop

    async def lateness_ms() -> list[float]:
        connection = _connection()
        late = []
        for timeout in (0.001, 0.002, 0.003, 0.005, 0.01) * 6:
            ended: asyncio.Future[float] = asyncio.get_running_loop().create_future()
            start = time.perf_counter()
            stream = WireStream(
                request_fields("/a.B/C", "127.0.0.1:1", "http", timeout), b"\x00" * 5, True,
                lambda _, ended=ended: ended.set_result(time.perf_counter()), start + timeout,
            )  # fmt: skip
            connection.start(stream)
            assert connection.deadlines.due == stream.deadline
            assert connection.deadlines.timer is not None
            late.append((await ended - start - timeout) * 1e3)
            assert (stream.status, stream.message) == (
                status.DEADLINE_EXCEEDED,
                "Deadline Exceeded",
            )
        connection.abort()
        return late

    for run in (asyncio.run, uvloop.run):
        late = run(lateness_ms())
        assert min(late) >= 0.0, late  # never before its time
