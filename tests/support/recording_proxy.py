"""A TCP proxy that records what a gRPC client sent, as the server received it.

It sits between a client (ghz, grpcurl, grpcbench) and any plaintext gRPC server,
forwards every byte both ways, and parses the client's side of each connection
at the HTTP/2 frame level (hpack decodes the header blocks). Nothing is inferred
from what a client reports: a bare TCP connect, an HTTP/2 connection that
carried no call, each stream's headers (``:authority``, ``grpc-timeout``,
``grpc-encoding``, metadata), its request messages in order with their
compressed flag, and how it ended, are all seen here. With ``tls=`` it
terminates TLS (ALPN h2) and records the SNI the client sent, so the TLS flags
of two clients compare too.

Conformance suites (tests/conformance) give two clients one command line and
compare the two recordings.
"""

from __future__ import annotations

import asyncio
import ssl
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, CONTINUATION = 0x0, 0x1, 0x3, 0x9
END_STREAM, END_HEADERS, PADDED, PRIORITY = 0x1, 0x4, 0x8, 0x20


@dataclass
class SeenStream:
    """One call as the server received it."""

    headers: dict[str, str] = field(default_factory=dict)
    messages: list[tuple[bool, bytes]] = field(default_factory=list)  # (compressed, body)
    ended: bool = False  # the client half-closed it (END_STREAM)
    reset: bool = False  # the client reset it (RST_STREAM)
    _buffer: bytearray = field(default_factory=bytearray, repr=False)

    @property
    def path(self) -> str:
        return self.headers.get(":path", "")


@dataclass
class SeenConnection:
    """One TCP connection a client opened."""

    peer: str
    sni: str | None = None
    http2: bool = False  # it sent the HTTP/2 preface
    streams: list[SeenStream] = field(default_factory=list)


class _ClientSide:
    """Parses the client's bytes of one connection into ``SeenConnection``."""

    def __init__(self, seen: SeenConnection) -> None:
        self.seen = seen
        self.buffer = bytearray()
        self.decoder = hpack.Decoder()
        self.decoder.max_allowed_table_size = 1 << 20
        self.streams: dict[int, SeenStream] = {}
        self.block = bytearray()  # a header block waiting for its CONTINUATION
        self.block_stream = 0
        self.block_ends = False

    def feed(self, data: bytes) -> None:
        self.buffer += data
        if not self.seen.http2:
            if len(self.buffer) < len(PREFACE):
                return
            if bytes(self.buffer[: len(PREFACE)]) != PREFACE:
                raise ValueError("not an HTTP/2 client")
            del self.buffer[: len(PREFACE)]
            self.seen.http2 = True
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                return
            kind, flags = self.buffer[3], self.buffer[4]
            stream_id = struct.unpack(">I", self.buffer[5:9])[0] & 0x7FFFFFFF
            payload = bytes(self.buffer[9 : 9 + length])
            del self.buffer[: 9 + length]
            self._frame(kind, flags, stream_id, payload)

    def _frame(self, kind: int, flags: int, stream_id: int, payload: bytes) -> None:
        if kind in (DATA, HEADERS) and flags & PADDED:
            payload = payload[1 : len(payload) - payload[0]]
        if kind == HEADERS:
            if flags & PRIORITY:
                payload = payload[5:]
            self.block, self.block_stream = bytearray(payload), stream_id
            self.block_ends = bool(flags & END_STREAM)
            if flags & END_HEADERS:
                self._headers()
        elif kind == CONTINUATION:
            self.block += payload
            if flags & END_HEADERS:
                self._headers()
        elif kind == DATA:
            stream = self.streams[stream_id]
            stream._buffer += payload
            self._messages(stream)
            stream.ended = stream.ended or bool(flags & END_STREAM)
        elif kind == RST_STREAM and stream_id in self.streams:
            self.streams[stream_id].reset = True

    def _headers(self) -> None:
        pairs = self.decoder.decode(bytes(self.block))
        stream = self.streams.get(self.block_stream)
        if stream is None:
            stream = self.streams[self.block_stream] = SeenStream()
            self.seen.streams.append(stream)
        for name, value in pairs:
            key = name.decode() if isinstance(name, bytes) else name
            text = value.decode("latin-1") if isinstance(value, bytes) else value
            stream.headers[key] = text
        stream.ended = stream.ended or self.block_ends

    @staticmethod
    def _messages(stream: SeenStream) -> None:
        buffer = stream._buffer
        while len(buffer) >= 5:
            size = int.from_bytes(buffer[1:5], "big")
            if len(buffer) < 5 + size:
                return
            stream.messages.append((buffer[0] == 1, bytes(buffer[5 : 5 + size])))
            del buffer[: 5 + size]


@dataclass
class Recording:
    """Every connection made through the proxy, in the order they were accepted."""

    connections: list[SeenConnection] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> list[SeenConnection]:
        with self.lock:
            taken, self.connections = self.connections, []
        return taken


async def _pump(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, side: _ClientSide | None
) -> None:
    try:
        while data := await reader.read(65536):
            if side is not None:
                side.feed(data)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ValueError, ssl.SSLError):
        pass
    finally:
        writer.close()


@contextmanager
def recording_proxy(
    upstream: str, tls: tuple[Path, Path] | None = None
) -> Iterator[tuple[str, Recording]]:
    """Listen on 127.0.0.1 in front of ``upstream`` (a plaintext HOST:PORT); with
    ``tls=(cert, key)`` clients speak TLS to the proxy. Yields (address, recording)."""
    recording = Recording()
    host, port = upstream.rsplit(":", 1)
    names: dict[int, str] = {}  # id(SSLObject) -> the SNI it carried
    context = None
    if tls is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(tls[0]), str(tls[1]))
        context.set_alpn_protocols(["h2"])

        def remember(sslobj: ssl.SSLObject, name: str | None, _: ssl.SSLContext) -> None:
            if name is not None:
                names[id(sslobj)] = name

        context.sni_callback = remember  # type: ignore[assignment]

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = "{}:{}".format(*writer.get_extra_info("peername")[:2])
        ssl_object = writer.get_extra_info("ssl_object")
        seen = SeenConnection(peer, sni=names.get(id(ssl_object)) if ssl_object else None)
        with recording.lock:
            recording.connections.append(seen)
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(
            _pump(reader, up_writer, _ClientSide(seen)), _pump(up_reader, writer, None)
        )

    loop = asyncio.new_event_loop()
    ready = threading.Event()
    address: list[str] = []
    stopped = asyncio.Event()

    async def main() -> None:
        server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
        address.append(f"127.0.0.1:{server.sockets[0].getsockname()[1]}")
        ready.set()
        async with server:
            await stopped.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield address[0], recording
    finally:
        loop.call_soon_threadsafe(stopped.set)
        thread.join(10)
