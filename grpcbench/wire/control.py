"""The connection's control frames, checked and parsed (RFC 9113 section 6).

Pure functions: each raises ``ConnectionError_`` for a frame the RFC makes a
connection error, else returns what the connection acts on. Keeping the checks
here leaves ``connection`` with what the frames *do*.
"""

from __future__ import annotations

from grpcbench.wire import frames
from grpcbench.wire.frames import ConnectionError_


def settings(flags: int, stream_id: int, payload: bytes) -> list[tuple[int, int]] | None:
    """A SETTINGS frame's values; None for the peer's ACK of ours."""
    if stream_id:
        raise ConnectionError_(frames.PROTOCOL_ERROR, "SETTINGS on a stream")
    if flags & frames.ACK:
        if payload:
            raise ConnectionError_(frames.FRAME_SIZE_ERROR, "a SETTINGS ACK with a payload")
        return None
    values = frames.parse_settings(payload)
    for key, value in values:
        if key == frames.SETTINGS_MAX_FRAME_SIZE and not (
            frames.DEFAULT_MAX_FRAME_SIZE <= value <= 2**24 - 1
        ):
            raise ConnectionError_(frames.PROTOCOL_ERROR, f"MAX_FRAME_SIZE {value}")
        if key == frames.SETTINGS_ENABLE_PUSH and value > 1:
            raise ConnectionError_(frames.PROTOCOL_ERROR, f"ENABLE_PUSH {value}")
    return values


def ping_answer(flags: int, stream_id: int, payload: bytes) -> bytes | None:
    """The ACK a PING needs (None for the ACK of one of ours)."""
    if stream_id:
        raise ConnectionError_(frames.PROTOCOL_ERROR, "PING on a stream")
    if len(payload) != 8:
        raise ConnectionError_(frames.FRAME_SIZE_ERROR, "a PING that is not 8 bytes")
    return None if flags & frames.ACK else frames.frame(frames.PING, frames.ACK, 0, payload)


def goaway(stream_id: int, payload: bytes) -> tuple[int, int, str]:
    """A GOAWAY's last processed stream id, error code and (the start of) its debug text."""
    if stream_id or len(payload) < 8:
        raise ConnectionError_(frames.PROTOCOL_ERROR, "a malformed GOAWAY")
    last = int.from_bytes(payload[:4], "big") & 0x7FFFFFFF
    code = int.from_bytes(payload[4:8], "big")
    return last, code, payload[8:200].decode("utf-8", "replace")


def window_increment(payload: bytes) -> int:
    if len(payload) != 4:
        raise ConnectionError_(frames.FRAME_SIZE_ERROR, "a WINDOW_UPDATE not 4 bytes")
    return int.from_bytes(payload, "big") & 0x7FFFFFFF


def rst_stream_code(stream_id: int, payload: bytes) -> int:
    if len(payload) != 4:
        raise ConnectionError_(frames.FRAME_SIZE_ERROR, "an RST_STREAM not 4 bytes")
    if stream_id == 0:
        raise ConnectionError_(frames.PROTOCOL_ERROR, "RST_STREAM on stream 0")
    return int.from_bytes(payload, "big")


def check_other(frame_type: int, payload: bytes) -> None:
    """Frames a client acts on by refusing them, or not at all (unknown types are
    ignored, RFC 9113 section 4.1)."""
    if frame_type == frames.PUSH_PROMISE:
        raise ConnectionError_(frames.PROTOCOL_ERROR, "PUSH_PROMISE, which we disabled")
    if frame_type == frames.CONTINUATION:
        raise ConnectionError_(frames.PROTOCOL_ERROR, "CONTINUATION without HEADERS")
    if frame_type == frames.PRIORITY and len(payload) != 5:
        raise ConnectionError_(frames.FRAME_SIZE_ERROR, "a PRIORITY frame not 5 bytes")
