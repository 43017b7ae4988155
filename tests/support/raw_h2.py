"""A raw HTTP/2 server of the tests' own, scripted per test, for hostile-server cases.

It speaks just enough HTTP/2 to be told apart from a broken one: each accepted
connection runs the test's ``script(peer)``, where ``peer`` reads whole frames
and writes whatever bytes the test wants (valid or not).
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator, Awaitable, Callable

import hpack

from grpcbench.wire import frames


class Peer:
    """One accepted connection, as the test script sees it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.frames_seen: list[tuple[int, int, int, bytes]] = []

    async def handshake(self, settings: dict[int, int] | None = None) -> None:
        """Read the client preface and its SETTINGS; send ours (and ACK theirs)."""
        preface = await self.reader.readexactly(len(frames.PREFACE))
        assert preface == frames.PREFACE
        self.send(frames.settings_frame(settings or {}))
        self.send(frames.frame(frames.SETTINGS, frames.ACK, 0))

    async def frame(self) -> tuple[int, int, int, bytes]:
        header = await self.reader.readexactly(9)
        high, low, kind, flags, stream_id = struct.unpack(">BHBBL", header)
        payload = await self.reader.readexactly((high << 16) | low)
        seen = (kind, flags, stream_id & 0x7FFFFFFF, payload)
        self.frames_seen.append(seen)
        return seen

    async def request(self) -> tuple[int, list[tuple[str, str]], bytes]:
        """The next request: its stream id, headers and body (after END_STREAM)."""
        streams: dict[int, tuple[list[tuple[str, str]], bytearray]] = {}
        while True:
            kind, flags, stream_id, payload = await self.frame()
            if kind == frames.HEADERS:
                block = payload
                while not flags & frames.END_HEADERS:  # CONTINUATION frames follow
                    kind_, flags_, _, more = await self.frame()
                    assert kind_ == frames.CONTINUATION
                    block += more
                    flags = (flags & ~frames.END_HEADERS) | (flags_ & frames.END_HEADERS)
                headers = self.decoder.decode(block)
                streams[stream_id] = (headers, bytearray())
                if flags & frames.END_STREAM:
                    return stream_id, headers, b""
            elif kind == frames.DATA and stream_id in streams:
                streams[stream_id][1].extend(payload)
                if flags & frames.END_STREAM:
                    headers, body = streams.pop(stream_id)
                    return stream_id, headers, bytes(body)

    def headers(self, stream_id: int, fields: list[tuple[str, str]], end: bool = False) -> bytes:
        block = self.encoder.encode(fields)
        flags = frames.END_HEADERS | (frames.END_STREAM if end else 0)
        return frames.frame(frames.HEADERS, flags, stream_id, block)

    def reply(self, stream_id: int, message: bytes = b"", grpc_status: int = 0) -> None:
        """A whole unary reply: headers, one message, trailers."""
        self.send(
            self.headers(stream_id, [(":status", "200"), ("content-type", "application/grpc")])
            + frames.frame(frames.DATA, 0, stream_id, grpc_message(message))
            + self.headers(stream_id, [("grpc-status", str(grpc_status))], end=True)
        )

    def send(self, data: bytes) -> None:
        self.writer.write(data)


def grpc_message(message: bytes, compressed: bool = False) -> bytes:
    """A gRPC length-prefixed message."""
    return (b"\1" if compressed else b"\0") + len(message).to_bytes(4, "big") + message


Script = Callable[[Peer], Awaitable[None]]


@contextlib.asynccontextmanager
async def raw_server(script: Script) -> AsyncIterator[str]:
    """Serve ``script`` on 127.0.0.1; yields the address. Every connection runs it."""
    tasks: set[asyncio.Task[None]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        try:
            await script(Peer(reader, writer))
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # the client went away, or the test is over
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
