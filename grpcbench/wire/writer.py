"""Frames out, batched: a ``transport.write`` per loop iteration, or per 8 writes.

Frames are appended to a list that is flushed once per loop iteration, so the calls
that a batch of replies starts (each reply's callback starts the next call) leave in
a few ``write`` calls, not one each. Not one only: the list is also flushed as soon
as it holds ``EARLY_FLUSH`` writes, so the server starts on the first calls of a
batch while the client still reads the rest. Waiting for the whole batch left the
server idle meanwhile: against the Go greeter at concurrency 50 (about 22 replies a
read), one write a batch gave 56,000-61,000 calls/s, a write per 8 calls 75,000-78,000
(h2load: 76,000), for 0.1-0.4 us more client CPU per call (``benchmarks/loadgen.py``,
A/B on one day). One early write per loop iteration gave no rate at all.
"""

from __future__ import annotations

import asyncio
import weakref

from grpcbench.wire import frames

# Writes queued before they are flushed at once (see above): 4 to 8 measured alike;
# 2 cost 1 us more client CPU per call, 16 and 32 lost rate.
EARLY_FLUSH = 8

_PREFIXES: dict[tuple[int, int, int], bytes] = {}


def prefix(frame_type: int, flags: int, length: int) -> bytes:
    """A frame header's first 5 bytes, cached (a level sends a few distinct ones)."""
    key = (frame_type, flags, length)
    cached = _PREFIXES.get(key)
    if cached is None:
        if len(_PREFIXES) > 4096:
            _PREFIXES.clear()
        cached = _PREFIXES[key] = frames.frame_prefix(frame_type, flags, length)
    return cached


class _Flusher:
    """The end of a loop iteration, for every connection on that loop that has frames
    queued: one callback for all of them. With 1,000 connections each carrying one
    call, a callback per connection was one more ``call_soon`` per call."""

    __slots__ = ("loop", "pending", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.pending: list[FrameWriter] = []
        self.scheduled = False

    def add(self, writer: FrameWriter) -> None:
        self.pending.append(writer)
        if not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self._end_of_iteration)

    def _end_of_iteration(self) -> None:
        self.scheduled = False
        pending, self.pending = self.pending, []
        for writer in pending:  # FrameWriter.flush, inline: one call less per connection
            writer.scheduled = False
            out = writer.out
            if out:
                transport = writer.transport
                if transport is not None and not transport.is_closing():
                    transport.write(b"".join(out) if len(out) > 1 else out[0])
                out.clear()


# One flusher per loop (a test may run several loops, one after another).
_FLUSHERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Flusher] = (
    weakref.WeakKeyDictionary()
)


def _flusher_of(loop: asyncio.AbstractEventLoop) -> _Flusher:
    flusher = _FLUSHERS.get(loop)
    if flusher is None:
        flusher = _FLUSHERS[loop] = _Flusher(loop)
    return flusher


class FrameWriter:
    """The bytes a connection will write at the end of this loop iteration (or once
    ``EARLY_FLUSH`` writes are queued)."""

    __slots__ = ("flusher", "transport", "out", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.flusher = _flusher_of(loop)
        self.transport: asyncio.Transport | None = None
        self.out: list[bytes] = []
        self.scheduled = False

    def write(self, data: bytes) -> None:
        out = self.out
        out.append(data)
        if len(out) >= EARLY_FLUSH:
            self.flush()  # the flush still scheduled, if any, finds what comes after
        elif not self.scheduled:
            self.scheduled = True
            self.flusher.add(self)

    def write_pieces(self, pieces: list[bytes | memoryview]) -> None:
        """Frames as pieces (headers, and views of a large body), after what is queued:
        ``writelines`` hands them to the transport without joining them in Python."""
        self.flush()
        transport = self.transport
        if transport is not None and not transport.is_closing():
            transport.writelines(pieces)

    def flush(self) -> None:
        """Write what is queued now (also before a close, so a GOAWAY leaves)."""
        transport = self.transport
        if self.out and transport is not None and not transport.is_closing():
            transport.write(b"".join(self.out) if len(self.out) > 1 else self.out[0])
        self.out.clear()
