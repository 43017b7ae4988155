"""HTTP/2 flow control (RFC 9113 section 6.9), both ways, for one connection.

Out (``SendFlow``): request bodies go out within the peer's connection and stream
windows, split to its MAX_FRAME_SIZE; what the windows hold back waits, stream by
stream in order, for a WINDOW_UPDATE. In (``ReceiveFlow``): we advertise large
windows (a benchmark reads at once) and credit what we read back once a quarter of
a window is used, one WINDOW_UPDATE per quarter rather than one per frame; that
accounting runs for every reply, so ``Connection._data`` does it inline, with
these constants.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from grpcbench.wire import frames
from grpcbench.wire.frames import ConnectionError_
from grpcbench.wire.keepalive import Keepalive
from grpcbench.wire.stream import CLOSED, OPEN, WireStream, end_sent

STREAM_WINDOW = 8 << 20  # what we advertise per stream
CONNECTION_WINDOW = 32 << 20  # and for the connection
# What we read is credited back once a quarter of a window is used: one
# WINDOW_UPDATE per quarter, not per frame (the connection does it inline, per DATA).
CREDIT_AT = CONNECTION_WINDOW >> 2
STREAM_CREDIT_AT = STREAM_WINDOW >> 2


class SendFlow:
    """The peer's windows and frame size, and the streams waiting for window."""

    __slots__ = ("window", "stream_window", "max_frame", "blocked", "write_pieces", "keepalive")

    def __init__(
        self, write_pieces: Callable[[list[bytes | memoryview]], None], keepalive: Keepalive
    ) -> None:
        self.window = frames.DEFAULT_WINDOW  # the connection's
        self.stream_window = frames.DEFAULT_WINDOW  # the peer's initial window per stream
        self.max_frame = frames.DEFAULT_MAX_FRAME_SIZE
        self.blocked: deque[WireStream] = deque()
        self.write_pieces = write_pieces
        self.keepalive = keepalive

    def send(self, stream: WireStream) -> None:
        """What the windows allow of ``stream.unsent``, frame by frame. Each frame is
        its 9-byte header and a view of the body, written together (``write_pieces``):
        the body is never copied in Python (a 3 MB request once was, four times). What
        the windows allow is taken at once; every frame of it but the last is a whole
        MAX_FRAME_SIZE with no flags, so they share one header (a 16 MB request is a
        thousand frames at grpc-go's 16 KB)."""
        sid = stream.id
        out: list[bytes | memoryview] = []
        unsent = stream.unsent
        at = stream.unsent_at
        left = len(unsent) - at
        room = min(left, stream.send_window, self.window)
        if room > 0:
            body = memoryview(unsent)
            left -= room
            stream.send_window -= room
            self.window -= room
            end = at + room
            full = self.max_frame
            if room > full:
                header = frames.FRAME_HEADER.pack(full >> 16, full & 0xFFFF, frames.DATA, 0, sid)
                last_at = end - (room - 1) % full - 1  # where the last (maybe short) frame starts
                append = out.append
                while at < last_at:
                    append(header)
                    append(body[at : at + full])
                    at += full
            size = end - at
            last = not left and stream.unsent_end
            flags = frames.END_STREAM if last else 0
            out.append(frames.FRAME_HEADER.pack(size >> 16, size & 0xFFFF, frames.DATA, flags, sid))
            out.append(body[at:end])
            at = end
            if last:
                end_sent(stream)
        if left:  # the windows are spent: the rest waits for a WINDOW_UPDATE
            stream.unsent_at = at
            if stream not in self.blocked:
                self.blocked.append(stream)
        else:
            stream.unsent, stream.unsent_at = b"", 0
            if stream.unsent_end and stream.state == OPEN:  # an empty END_STREAM
                out.append(frames.frame(frames.DATA, frames.END_STREAM, sid))
                end_sent(stream)
        if out:
            self.keepalive.pings_without_data = 0
            self.write_pieces(out)

    def forget(self, stream: WireStream) -> None:
        """A stream that ended waits for window no more."""
        if self.blocked and stream in self.blocked:
            self.blocked.remove(stream)

    def initial_window(self, value: int, streams: Iterable[WireStream]) -> None:
        """SETTINGS_INITIAL_WINDOW_SIZE changes every open stream's window by the delta."""
        if value > frames.MAX_WINDOW:
            raise ConnectionError_(frames.FLOW_CONTROL_ERROR, "INITIAL_WINDOW_SIZE over 2^31-1")
        delta = value - self.stream_window
        self.stream_window = value
        for stream in streams:
            stream.send_window += delta

    def window_update(self, stream: WireStream | None, increment: int) -> str:
        """Add a WINDOW_UPDATE's increment (``stream`` None: the connection's); a
        stream error's reason, or "" (a connection error raises)."""
        if stream is None:
            if increment == 0:
                raise ConnectionError_(frames.PROTOCOL_ERROR, "a WINDOW_UPDATE of 0")
            self.window += increment
            if self.window > frames.MAX_WINDOW:
                raise ConnectionError_(frames.FLOW_CONTROL_ERROR, "connection window over 2^31-1")
            return ""
        if increment == 0:
            return "a WINDOW_UPDATE of 0"
        stream.send_window += increment
        if stream.send_window > frames.MAX_WINDOW:
            return "stream window over 2^31-1"
        return ""

    def unblock(self) -> None:
        """Send what waited, in order, while the connection has window."""
        blocked = self.blocked
        for _ in range(len(blocked)):
            if self.window <= 0:
                return
            stream = blocked.popleft()
            if stream.state != CLOSED:
                self.send(stream)
