"""Frames out, batched: one ``transport.write`` per loop iteration per connection.

Frames are appended to a list that is flushed once per loop iteration, so the calls
that a batch of replies starts (each reply's callback starts the next call) leave in
one ``write`` and one system call, not one each.
"""

from __future__ import annotations

import asyncio

from grpcbench.wire import frames

_PREFIXES: dict[tuple[int, int, int], bytes] = {}


def prefix(kind: int, flags: int, length: int) -> bytes:
    """A frame header's first 5 bytes, cached (a level sends a few distinct ones)."""
    key = (kind, flags, length)
    cached = _PREFIXES.get(key)
    if cached is None:
        if len(_PREFIXES) > 4096:
            _PREFIXES.clear()
        cached = _PREFIXES[key] = frames.frame_prefix(kind, flags, length)
    return cached


class FrameWriter:
    """The bytes a connection will write at the end of this loop iteration."""

    __slots__ = ("loop", "transport", "out", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.out: list[bytes] = []
        self.scheduled = False

    def write(self, data: bytes) -> None:
        self.out.append(data)
        if not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write what is queued now (also before a close, so a GOAWAY leaves)."""
        self.scheduled = False
        transport = self.transport
        if self.out and transport is not None and not transport.is_closing():
            transport.write(b"".join(self.out) if len(self.out) > 1 else self.out[0])
        self.out.clear()
