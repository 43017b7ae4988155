"""Header blocks that do not fit one frame: CONTINUATION in, CONTINUATION out.

Rare on gRPC (a block is a few dozen bytes after the first call), so this is kept
out of the connection's hot path: a HEADERS frame with END_HEADERS and neither
PADDED nor PRIORITY (``PLAIN_HEADERS_MASK``) never comes here.
"""

from __future__ import annotations

from grpcbench.wire import frames
from grpcbench.wire.frames import ConnectionError_
from grpcbench.wire.headers import MAX_HEADER_LIST_SIZE

PLAIN_HEADERS_MASK = frames.END_HEADERS | frames.PADDED | frames.PRIORITY_FLAG


class ContinuedBlock:
    """A header block whose HEADERS frame lacked END_HEADERS, gathered until it ends.
    RFC 9113 6.10: nothing else may come between, on any stream."""

    __slots__ = ("stream_id", "flags", "parts", "size")

    def __init__(self, stream_id: int, flags: int, first: bytes) -> None:
        self.stream_id = stream_id
        self.flags = flags  # the HEADERS frame's (END_STREAM)
        self.parts = [first]
        self.size = len(first)

    def add(self, frame_type: int, flags: int, stream_id: int, payload: bytes) -> bytes | None:
        """The whole block once END_HEADERS comes; None until then."""
        if frame_type != frames.CONTINUATION or stream_id != self.stream_id:
            raise ConnectionError_(frames.PROTOCOL_ERROR, "a header block interrupted")
        self.parts.append(payload)
        self.size += len(payload)
        if self.size > MAX_HEADER_LIST_SIZE * 2:
            raise ConnectionError_(frames.ENHANCE_YOUR_CALM, "an endless header block")
        return b"".join(self.parts) if flags & frames.END_HEADERS else None


def split_block(stream_id: int, block: bytes, end: bool, max_frame: int) -> bytes:
    """HEADERS then CONTINUATION frames for a block larger than the peer's frame size."""
    chunks = [block[i : i + max_frame] for i in range(0, len(block), max_frame)]
    out = [frames.frame(frames.HEADERS, frames.END_STREAM if end else 0, stream_id, chunks[0])]
    for index, chunk in enumerate(chunks[1:], 2):
        flags = frames.END_HEADERS if index == len(chunks) else 0
        out.append(frames.frame(frames.CONTINUATION, flags, stream_id, chunk))
    return b"".join(out)
