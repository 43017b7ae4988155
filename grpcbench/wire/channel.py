"""A channel of the wire transport: one target, one live connection at a time.

``WireChannel`` has the shape of the grpc.aio channel that workloads bind to
(``channel_ready``, ``close``, ``unary_unary`` ... ``stream_stream`` taking a
request, ``timeout`` and ``metadata``; errors are ``grpc.aio.AioRpcError``),
so every workload, ``--call`` and each connection strategy runs on either
stack unchanged. The fast path (``start``) takes a ``WireStream`` (request
fields, a framed body, a callback), for the callback loops of
``load.callback_loops``.

A connection that drains (GOAWAY, stream ids exhausted) or dies is replaced
on the next call; calls it did not process are sent again on the new one.
While a new connection cannot be made, calls fail at once with Unavailable
(as grpc does in TRANSIENT_FAILURE), and the next attempt waits a back-off.
"""

from __future__ import annotations

import asyncio
import gzip
import math
import os
import ssl
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from grpcbench.base.parsing import parse_host_port
from grpcbench.rpc.client_options import DEFAULT, ClientOptions
from grpcbench.rpc.security import PLAINTEXT, ChannelSecurity
from grpcbench.wire import status
from grpcbench.wire.callables import (
    StreamStream,
    StreamUnary,
    UnaryStream,
    UnaryUnary,
    framed,
    rpc_error,
)
from grpcbench.wire.connection import Connection
from grpcbench.wire.connection_core import ConnectionCore
from grpcbench.wire.headers import (
    RequestFields,
    encode_fields,
    metadata_fields,
    request_fields,
)
from grpcbench.wire.stream import (
    CLOSED,
    WireStream,
    finish,
    message_prefix,
)

CONNECT_TIMEOUT_S = 10.0  # ghz's default dial timeout (--connect-timeout)
BACKOFF_S = (0.05, 0.1, 0.2, 0.5, 1.0)

Metadata = Sequence[tuple[str, str | bytes]] | None


def tls_context(security: ChannelSecurity) -> ssl.SSLContext:
    """ALPN h2 and the checks ``--cacert``/``--cname``/``--skipTLS`` ask for (as grpcio's)."""
    if security.root_pem:
        context = ssl.create_default_context(cadata=security.root_pem)
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # a trusted leaf (--skipTLS)
    else:
        context = ssl.create_default_context()
    if security.cert_pem and security.key_pem:
        _load_client_certificate(context, security.cert_pem, security.key_pem)
    context.set_alpn_protocols(["h2"])
    return context


def _load_client_certificate(context: ssl.SSLContext, cert_pem: str, key_pem: str) -> None:
    """ssl loads a key only from a file: an anonymous in-memory one (memfd) on Linux, so
    the key never reaches a disk; elsewhere a private file, removed once read."""
    if hasattr(os, "memfd_create"):
        descriptors: list[int] = []
        try:
            for text in (cert_pem, key_pem):
                descriptor = os.memfd_create("grpcbench-tls", 0)
                descriptors.append(descriptor)
                os.write(descriptor, text.encode())
            cert, key = (f"/proc/self/fd/{descriptor}" for descriptor in descriptors)
            context.load_cert_chain(cert, key)
            return
        finally:
            for descriptor in descriptors:
                os.close(descriptor)
    with tempfile.TemporaryDirectory(prefix="grpcbench-tls-") as folder:
        os.chmod(folder, 0o700)
        cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
        for path, text in ((cert, cert_pem), (key, key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(text)
        context.load_cert_chain(cert, key)


class WireChannel:
    """Connections to one target over grpcbench's HTTP/2 transport."""

    def __init__(
        self, target: str, security: ChannelSecurity = PLAINTEXT,
        connect_timeout_s: float = CONNECT_TIMEOUT_S, client: ClientOptions = DEFAULT,
    ) -> None:  # fmt: skip
        self.target = target
        self.connect_timeout_s = connect_timeout_s
        self.client = client
        self.host, self.port = parse_host_port(target)
        self.security = security
        self.tls = security.tls
        self.scheme = "https" if self.tls else "http"
        self.authority = client.authority or (
            security.cname if self.tls and security.cname else target
        )
        # -e: every request message gzip-compressed, and the header that says so.
        self.fixed_fields: tuple[tuple[str, str], ...] = (
            (("grpc-encoding", "gzip"),) if client.gzip else ()
        )
        self.max_send = client.max_send_bytes
        self.max_recv_bytes = client.max_recv_bytes  # read by each Connection
        self.keepalive_s = client.keepalive_s  # likewise
        self.connection: Connection | None = None
        self.connecting: asyncio.Task[None] | None = None
        self.waiting: deque[WireStream] = deque()  # calls while a connection is made
        self.failures = 0
        self.retry_after = 0.0
        self.last_error = ""
        self.closed = False
        self.requests: dict[tuple[str, float | None, Any], RequestFields] = {}
        self.connections_made = 0
        self._ssl = tls_context(security) if self.tls else None

    # --- connections ------------------------------------------------------------------

    async def channel_ready(self) -> None:
        """Connect now (the caller bounds the wait); raises ConnectionError on failure."""
        if self.connection is None or self.connection.closed or self.connection.draining:
            self.connection = await self._connect()

    async def _connect(self) -> Connection:
        loop = asyncio.get_running_loop()
        server_hostname = (self.security.cname or self.host) if self.tls else None
        try:
            _, connection = await asyncio.wait_for(
                loop.create_connection(
                    lambda: Connection(self), self.host, self.port,
                    ssl=self._ssl, server_hostname=server_hostname,
                ),
                self.connect_timeout_s,
            )  # fmt: skip
        except (OSError, TimeoutError, ssl.SSLError) as error:
            if isinstance(error, ssl.SSLError) and error.reason == "WRONG_VERSION_NUMBER":
                # A plaintext server's first bytes (an HTTP/2 SETTINGS frame) read as TLS.
                hint = (" (a ghz command line speaks TLS unless told, as ghz does)"
                        if self.security.system_roots else "")  # fmt: skip
                raise ConnectionError(
                    f"cannot connect to {self.target}: it speaks plaintext, not TLS: give"
                    f" --insecure{hint}"
                ) from None
            raise ConnectionError(f"cannot connect to {self.target}: {error}") from None
        if self.tls:
            assert connection.transport is not None
            tls = connection.transport.get_extra_info("ssl_object")
            if tls is None or tls.selected_alpn_protocol() != "h2":
                connection.abort()
                raise ConnectionError(f"{self.target} did not agree to HTTP/2 (ALPN h2)")
        try:
            await asyncio.wait_for(asyncio.shield(connection.ready), self.connect_timeout_s)
        except TimeoutError:
            connection.abort()
            raise ConnectionError(
                f"{self.target} sent no HTTP/2 SETTINGS within {self.connect_timeout_s:g}s"
            ) from None
        except ConnectionRefusedError as error:
            raise ConnectionError(f"{self.target} closed the connection: {error}") from None
        self.connections_made += 1
        return connection

    def connection_closed(self, connection: ConnectionCore) -> None:
        if connection is self.connection:
            self.connection = None

    def resend(self, streams: list[WireStream]) -> None:
        for stream in streams:
            self.start(stream)

    def start(self, stream: WireStream) -> None:
        """Send a call on the live connection, making one first if needed."""
        connection = self.connection
        if connection is not None and not connection.draining and not connection.closed:
            connection.start(stream)
            return
        if self.closed:
            self._fail_soon(stream, "the channel is closed")
            return
        self.waiting.append(stream)
        if self.connecting is None:
            loop = asyncio.get_running_loop()
            if loop.time() < self.retry_after:
                self._fail_waiting(self.last_error)
                return
            self.connecting = loop.create_task(self._reconnect())

    async def _reconnect(self) -> None:
        try:
            connection = await self._connect()
        except ConnectionError as error:
            self.failures += 1
            delay = BACKOFF_S[min(self.failures, len(BACKOFF_S)) - 1]
            self.retry_after = asyncio.get_running_loop().time() + delay
            self.last_error = str(error)
            self._fail_waiting(self.last_error)
            return
        finally:
            self.connecting = None
        self.failures = 0
        if self.closed:
            connection.close()
            self._fail_waiting("the channel is closed")
            return
        self.connection = connection
        waiting, self.waiting = self.waiting, deque()
        for stream in waiting:
            self.start(stream)

    def _fail_waiting(self, reason: str) -> None:
        waiting, self.waiting = self.waiting, deque()
        for stream in waiting:
            self._fail_soon(stream, reason)

    def _fail_soon(self, stream: WireStream, reason: str, code: int = status.UNAVAILABLE) -> None:
        """Fail in the next loop iteration: a callback loop that starts its next call
        from ``on_done`` must not recurse."""
        asyncio.get_running_loop().call_soon(finish, stream, code, reason)

    def start_framed(self, stream: WireStream, request: bytes) -> None:
        """``start`` a call whose one request message is framed now (``frame``); one over
        --max-send-message-size fails that call ResourceExhausted, as grpc's does."""
        try:
            stream.body = self.frame(request)
        except grpc.aio.AioRpcError as error:
            self._fail_soon(stream, error.details() or "", status.RESOURCE_EXHAUSTED)
            return
        self.start(stream)

    def cancel(
        self, stream: WireStream, message: str = "cancelled by the client",
        code: int = status.CANCELLED,
    ) -> None:  # fmt: skip
        """End a call from our side, wherever it is: waiting for a connection, queued
        on one, or open on the one it was sent on (reset there)."""
        if stream.state == CLOSED:
            return
        if stream in self.waiting:
            self.waiting.remove(stream)
            finish(stream, code, message)
            return
        connection = stream.connection or self.connection
        if connection is not None:
            connection.cancel(stream, code, message)
        else:
            finish(stream, code, message)

    def open_streams(self) -> list[WireStream]:
        """The calls not ended yet: waiting, queued or open on the live connection."""
        streams = list(self.waiting)
        if self.connection is not None:
            streams += [*self.connection.streams.values(), *self.connection.pending]
        return streams

    async def close(self) -> None:
        self.closed = True
        if self.connecting is not None:
            self.connecting.cancel()
        if self.connection is not None:
            self.connection.close()
            self.connection = None
        self._fail_waiting("the channel is closed")

    # --- building calls ----------------------------------------------------------------

    def request_fields(
        self, path: str, timeout_s: float | None, metadata: Metadata = None, varying: bool = False
    ) -> RequestFields:
        """A call's header fields; ``varying``: the metadata changes from call to call
        (templates), so it is kept out of the dynamic table."""
        if varying:
            base = self.request_fields(path, timeout_s)
            return base.with_tail(encode_fields(metadata_fields(metadata))) if metadata else base
        key = (path, timeout_s, tuple(metadata) if metadata else None)
        fields = self.requests.get(key)
        if fields is None:
            if len(self.requests) > 1024:
                self.requests.clear()
            with_fixed = (*self.fixed_fields, *(metadata or ()))
            fields = self.requests[key] = request_fields(
                path, self.authority, self.scheme, timeout_s, with_fixed or None
            )
        return fields

    def frame(self, message: bytes) -> bytes:
        """A request message as sent: length-prefixed, gzip-compressed with -e; a message
        over --max-send-message-size fails its call ResourceExhausted, as grpc's does."""
        if self.max_send and len(message) > self.max_send:
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(), grpc.aio.Metadata(),
                f"CLIENT: Sent message larger than max ({len(message)} vs. {self.max_send})",
            )  # fmt: skip
        if self.client.gzip:
            compressed = gzip.compress(message)
            return message_prefix(len(compressed), True) + compressed
        return framed(message)

    def new_stream(
        self,
        path: str,
        body: bytes,
        end: bool,
        timeout_s: float | None,
        metadata: Metadata,
        on_done: Callable[[WireStream], None],
        on_message: Callable[[bytes], None] | None = None,
    ) -> WireStream:
        deadline = time.perf_counter() + timeout_s if timeout_s is not None else math.inf
        return WireStream(
            self.request_fields(path, timeout_s, metadata), body, end, on_done, deadline, on_message
        )

    async def counted_unary_stream(
        self, path: str, request: bytes, timeout: float | None, metadata: Metadata = None
    ) -> tuple[int, int, float, list[int], int]:
        """A server stream read only to count it, with no wake-up per message: its
        messages, their bytes, the seconds to the first, the gaps (us) between reads
        that completed messages and how many came with another. Raises as grpc.aio would."""
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[None] = loop.create_future()
        started = time.perf_counter()

        def on_done(stream: WireStream) -> None:
            if not ended.done():
                ended.set_result(None)

        stream = self.new_stream(path, self.frame(request), True, timeout, metadata, on_done)
        self.start(stream)
        try:
            await ended
        except asyncio.CancelledError:
            self.cancel(stream)
            raise
        if stream.status != status.OK:
            raise rpc_error(stream)
        first = stream.first_at - started if stream.messages else 0.0
        return stream.messages, stream.bytes, first, stream.gaps_us or [], stream.together

    # --- the grpc.aio-shaped API -------------------------------------------------------

    def unary_unary(
        self, method: str, request_serializer: Callable[[Any], bytes] | None = None,
        response_deserializer: Callable[[bytes], Any] | None = None, **_: Any,
    ) -> UnaryUnary:  # fmt: skip
        return UnaryUnary(self, method, request_serializer, response_deserializer)

    def unary_stream(
        self, method: str, request_serializer: Callable[[Any], bytes] | None = None,
        response_deserializer: Callable[[bytes], Any] | None = None, **_: Any,
    ) -> UnaryStream:  # fmt: skip
        return UnaryStream(self, method, request_serializer, response_deserializer)

    def stream_unary(
        self, method: str, request_serializer: Callable[[Any], bytes] | None = None,
        response_deserializer: Callable[[bytes], Any] | None = None, **_: Any,
    ) -> StreamUnary:  # fmt: skip
        return StreamUnary(self, method, request_serializer, response_deserializer)

    def stream_stream(
        self, method: str, request_serializer: Callable[[Any], bytes] | None = None,
        response_deserializer: Callable[[bytes], Any] | None = None, **_: Any,
    ) -> StreamStream:  # fmt: skip
        return StreamStream(self, method, request_serializer, response_deserializer)
