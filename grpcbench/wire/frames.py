"""HTTP/2 frame layout (RFC 9113 section 4): the splitter and the frame builders.

Pure functions and one small class, with no I/O: the property-based fuzz in
``tests/test_wire_frames.py`` feeds the splitter arbitrary bytes.
"""

from __future__ import annotations

import struct

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

DATA = 0x0
HEADERS = 0x1
PRIORITY = 0x2
RST_STREAM = 0x3
SETTINGS = 0x4
PUSH_PROMISE = 0x5
PING = 0x6
GOAWAY = 0x7
WINDOW_UPDATE = 0x8
CONTINUATION = 0x9

END_STREAM = 0x1
ACK = 0x1
END_HEADERS = 0x4
PADDED = 0x8
PRIORITY_FLAG = 0x20

SETTINGS_HEADER_TABLE_SIZE = 0x1
SETTINGS_ENABLE_PUSH = 0x2
SETTINGS_MAX_CONCURRENT_STREAMS = 0x3
SETTINGS_INITIAL_WINDOW_SIZE = 0x4
SETTINGS_MAX_FRAME_SIZE = 0x5
SETTINGS_MAX_HEADER_LIST_SIZE = 0x6

# Error codes (RFC 9113 section 7).
NO_ERROR = 0x0
PROTOCOL_ERROR = 0x1
INTERNAL_ERROR = 0x2
FLOW_CONTROL_ERROR = 0x3
SETTINGS_TIMEOUT = 0x4
STREAM_CLOSED = 0x5
FRAME_SIZE_ERROR = 0x6
REFUSED_STREAM = 0x7
CANCEL = 0x8
COMPRESSION_ERROR = 0x9
CONNECT_ERROR = 0xA
ENHANCE_YOUR_CALM = 0xB
INADEQUATE_SECURITY = 0xC
HTTP_1_1_REQUIRED = 0xD

DEFAULT_MAX_FRAME_SIZE = 16_384
DEFAULT_WINDOW = 65_535
MAX_WINDOW = 2**31 - 1
MAX_STREAM_ID = 2**31 - 1

# length (24 bits as 8 + 16), type, flags, stream id
FRAME_HEADER = struct.Struct(">BHBBL")
HEADER_SIZE = 9


class ConnectionError_(Exception):
    """The peer broke HTTP/2: the connection ends with GOAWAY(code)."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


Frame = tuple[int, int, int, bytes]  # type, flags, stream id, payload


def oversized(length: int, limit: int) -> ConnectionError_:
    """FRAME_SIZE_ERROR for a frame longer than we advertised (RFC 9113 4.2)."""
    return ConnectionError_(
        FRAME_SIZE_ERROR, f"a frame of {length} bytes, over the {limit} allowed"
    )


class FrameSplitter:
    """Cuts a byte stream into whole frames; keeps a partial frame for the next read.

    A frame longer than ``max_frame_size`` (what we advertised) is a connection
    error (FRAME_SIZE_ERROR), raised before its payload is buffered.
    ``Connection.data_received`` cuts frames the same way, inline (the tests hold
    both to the same frames)."""

    __slots__ = ("buffer", "max_frame_size")

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.buffer = b""
        self.max_frame_size = max_frame_size

    def split(self, data: bytes) -> list[Frame]:
        if self.buffer:
            data = self.buffer + data
        frames: list[Frame] = []
        size = len(data)
        position = 0
        unpack = FRAME_HEADER.unpack_from
        limit = self.max_frame_size
        while size - position >= HEADER_SIZE:
            high, low, frame_type, flags, stream_id = unpack(data, position)
            length = (high << 16) | low
            if length > limit:
                raise oversized(length, limit)
            end = position + HEADER_SIZE + length
            if end > size:
                break
            frames.append(
                (frame_type, flags, stream_id & 0x7FFFFFFF, data[position + HEADER_SIZE : end])
            )
            position = end
        self.buffer = data[position:] if position < size else b""
        return frames


def frame(frame_type: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    length = len(payload)
    return FRAME_HEADER.pack(length >> 16, length & 0xFFFF, frame_type, flags, stream_id) + payload


def frame_prefix(frame_type: int, flags: int, length: int) -> bytes:
    """The first 5 bytes of a frame header; the stream id follows (pre-encoded frames)."""
    return FRAME_HEADER.pack(length >> 16, length & 0xFFFF, frame_type, flags, 0)[:5]


def settings_frame(settings: dict[int, int]) -> bytes:
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HL", k, v) for k, v in settings.items()))


def window_update(stream_id: int, increment: int) -> bytes:
    return frame(WINDOW_UPDATE, 0, stream_id, struct.pack(">L", increment))


def rst_stream(stream_id: int, code: int) -> bytes:
    return frame(RST_STREAM, 0, stream_id, struct.pack(">L", code))


def goaway(last_stream_id: int, code: int, debug: bytes = b"") -> bytes:
    return frame(GOAWAY, 0, 0, struct.pack(">LL", last_stream_id, code) + debug)


def strip_padding(flags: int, payload: bytes, frame_type: int) -> bytes:
    """A PADDED frame's payload without its pad length byte and padding (and, for
    HEADERS with PRIORITY, without the 5 priority bytes)."""
    start = 0
    end = len(payload)
    if flags & PADDED:
        if not payload:
            raise ConnectionError_(PROTOCOL_ERROR, "a PADDED frame without its pad length")
        pad = payload[0]
        start = 1
        end -= pad
    if frame_type == HEADERS and flags & PRIORITY_FLAG:
        start += 5
    if end < start:
        raise ConnectionError_(PROTOCOL_ERROR, "padding longer than the frame")
    return payload[start:end]


def parse_settings(payload: bytes) -> list[tuple[int, int]]:
    if len(payload) % 6:
        raise ConnectionError_(FRAME_SIZE_ERROR, "a SETTINGS frame whose length is not 6n")
    return [struct.unpack_from(">HL", payload, i) for i in range(0, len(payload), 6)]
