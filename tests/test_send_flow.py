"""Request bodies out within the peer's windows (``wire.flow_control.SendFlow``): for any
body, frame size, windows and WINDOW_UPDATEs, the DATA frames are the body, in order,
none over MAX_FRAME_SIZE or a window, END_STREAM on the last one only."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from grpcbench.wire import frames
from grpcbench.wire.flow_control import SendFlow
from grpcbench.wire.stream import HALF_CLOSED_LOCAL, OPEN, WireStream


class _Keepalive:
    def __init__(self) -> None:
        self.pings_without_data = 3


def _frames(pieces: list[bytes | memoryview]) -> list[tuple[int, int, bytes]]:
    """(flags, stream id, payload) of each DATA frame in what was written."""
    data = b"".join(bytes(piece) for piece in pieces)
    found, at = [], 0
    while at < len(data):
        high, low, kind, flags, sid = frames.FRAME_HEADER.unpack_from(data, at)
        length = high << 16 | low
        assert kind == frames.DATA
        found.append((flags, sid, data[at + 9 : at + 9 + length]))
        at += 9 + length
    return found


@settings(max_examples=300, deadline=None)
@given(
    size=st.integers(0, 200_000),
    max_frame=st.sampled_from([16_384, 16_385, 65_535, 1 << 20]),
    stream_window=st.integers(-5_000, 150_000),
    connection_window=st.integers(-5_000, 150_000),
    updates=st.lists(st.tuples(st.booleans(), st.integers(1, 90_000)), max_size=12),
    end=st.booleans(),
)
def test_the_frames_are_the_body_within_every_window_and_frame_size(
    size: int,
    max_frame: int,
    stream_window: int,
    connection_window: int,
    updates: list[tuple[bool, int]],
    end: bool,
) -> None:
    written: list[bytes | memoryview] = []
    keepalive = _Keepalive()
    flow = SendFlow(written.extend, keepalive)  # type: ignore[arg-type]
    flow.max_frame, flow.window = max_frame, connection_window
    body = bytes(range(256)) * (size // 256) + bytes(size % 256)
    stream = WireStream(None, b"", False, lambda _: None, 0.0)  # type: ignore[arg-type]
    stream.id, stream.state, stream.send_window = 7, OPEN, stream_window
    stream.unsent, stream.unsent_end = body, end
    stream_allowed, connection_allowed = stream_window, connection_window
    flow.send(stream)
    for to_stream, increment in [(True, 0), *updates]:
        if increment:
            # as Connection does on a WINDOW_UPDATE: the window grows, what waited goes
            assert flow.window_update(stream if to_stream else None, increment) == ""
            stream_allowed += increment if to_stream else 0
            connection_allowed += 0 if to_stream else increment
            flow.unblock()
        got = _frames(written)
        sent = sum(len(payload) for _, _, payload in got)
        assert sent == max(0, min(size, stream_allowed, connection_allowed))
        assert b"".join(payload for _, _, payload in got) == body[:sent]
        assert all(len(payload) <= max_frame and sid == 7 for _, sid, payload in got)
        ends = [i for i, (flags, _, _) in enumerate(got) if flags & frames.END_STREAM]
        whole = sent == size and end
        assert ends == ([len(got) - 1] if whole else [])
        assert (stream.state == HALF_CLOSED_LOCAL) == whole
        assert (stream in flow.blocked) == (sent < size)
    assert keepalive.pings_without_data == (0 if written else 3)  # DATA out: it may ping again
