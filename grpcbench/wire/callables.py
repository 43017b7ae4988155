"""The multi-callables a ``WireChannel`` hands out, shaped as grpc.aio's
(``unary_unary`` ... ``stream_stream``): each call is a ``WireStream`` on the
channel's connection, its replies read as they come, its end an
``AioRpcError`` unless it is OK."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any

import grpc

from grpcbench.wire import status
from grpcbench.wire.stream import (
    CLOSED,
    EXTRA_REPLY,
    IDLE,
    WireStream,
    message_prefix,
)

if TYPE_CHECKING:
    from grpcbench.wire.channel import Metadata, WireChannel

_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}


def rpc_error(stream: WireStream) -> grpc.aio.AioRpcError:
    """The error grpc.aio would raise for this ending, so workloads catch one type."""
    code = _STATUS_CODES.get(stream.status, grpc.StatusCode.UNKNOWN)
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), stream.message)


def _identity(value: Any) -> Any:
    return value


def framed(message: bytes) -> bytes:
    return message_prefix(len(message)) + message


class _Method:
    def __init__(
        self,
        channel: WireChannel,
        path: str,
        serializer: Callable[[Any], bytes] | None,
        deserializer: Callable[[bytes], Any] | None,
    ) -> None:
        self.channel = channel
        self.path = path
        self.serialize = serializer or _identity
        self.deserialize = deserializer or _identity


class _Replies:
    """The replies of one call, as they arrive, and its ending."""

    def __init__(self) -> None:
        self.messages: deque[bytes] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.stream: WireStream | None = None

    def on_message(self, message: bytes) -> None:
        self.messages.append(message)
        self._wake()

    def on_done(self, stream: WireStream) -> None:
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def next(self, channel: WireChannel) -> bytes | None:
        """The next reply; None at a clean end; raises the call's error."""
        stream = self.stream
        assert stream is not None
        while not self.messages:
            if stream.state == CLOSED:
                if stream.status != status.OK:
                    raise rpc_error(stream)
                return None
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            except asyncio.CancelledError:
                channel.cancel(stream)
                raise
            finally:
                self.waiter = None
        return self.messages.popleft()


def _single(method: _Method, request: Any, timeout: float | None, metadata: Metadata) -> _Replies:
    """A call of one request (unary, server streaming), started: its replies to read."""
    replies = _Replies()
    stream = method.channel.new_stream(
        method.path, method.channel.frame(method.serialize(request)), True, timeout, metadata,
        replies.on_done, replies.on_message,
    )  # fmt: skip
    replies.stream = stream
    method.channel.start(stream)
    return replies


class UnaryUnary(_Method):
    async def __call__(
        self, request: Any, *, timeout: float | None = None, metadata: Metadata = None, **_: Any
    ) -> Any:
        replies = _single(self, request, timeout, metadata)
        reply = await replies.next(self.channel)
        if reply is None:  # OK without a message: grpc.aio returns None too
            return None
        if await replies.next(self.channel) is not None:
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.INTERNAL, grpc.aio.Metadata(), grpc.aio.Metadata(),
                EXTRA_REPLY,
            )  # fmt: skip
        return self.deserialize(reply)


class _ReplyIterator:
    def __init__(self, method: _Method, replies: _Replies, pump: asyncio.Task[None] | None):
        self.method = method
        self.replies = replies
        self.pump = pump

    def __aiter__(self) -> _ReplyIterator:
        return self

    async def __anext__(self) -> Any:
        try:
            reply = await self.replies.next(self.method.channel)
        except BaseException:
            self._stop_pump()
            raise
        if reply is None:
            self._stop_pump()
            raise StopAsyncIteration
        return self.method.deserialize(reply)

    def _stop_pump(self) -> None:
        if self.pump is not None and not self.pump.done():
            self.pump.cancel()

    def cancel(self) -> bool:
        """End the call from our side (RST_STREAM CANCEL), as grpc.aio's call.cancel():
        False once it has ended."""
        stream = self.replies.stream
        ended = stream is None or stream.state == CLOSED
        if stream is not None:
            self.method.channel.cancel(stream)
        self._stop_pump()
        return not ended


class UnaryStream(_Method):
    def __call__(
        self, request: Any, *, timeout: float | None = None, metadata: Metadata = None, **_: Any
    ) -> _ReplyIterator:
        return _ReplyIterator(self, _single(self, request, timeout, metadata), None)


async def _pump(
    channel: WireChannel,
    stream: WireStream,
    requests: AsyncIterable[Any] | Iterable[Any],
    serialize: Callable[[Any], bytes],
) -> None:
    """Send a client stream's requests as the iterator yields them, then END_STREAM."""
    try:
        if isinstance(requests, AsyncIterable):
            async for request in requests:
                _send(channel, stream, channel.frame(serialize(request)), False)
        else:
            for request in requests:
                _send(channel, stream, channel.frame(serialize(request)), False)
        _send(channel, stream, b"", True)
    except asyncio.CancelledError:
        raise
    except grpc.aio.AioRpcError as error:  # a message over --max-send-message-size
        channel.cancel(stream, error.details() or "", status.RESOURCE_EXHAUSTED)
    except Exception as error:  # the caller's iterator failed: the call is cancelled
        channel.cancel(stream, f"the request iterator raised {type(error).__name__}: {error}")


def _send(channel: WireChannel, stream: WireStream, data: bytes, end: bool) -> None:
    connection = stream.connection
    if connection is not None:
        connection.send(stream, data, end)  # it knows the stream's state
    elif stream.state == IDLE:
        stream.body += data  # not sent yet (waiting for a connection)
        stream.end = end


def _streamed(
    method: _Method,
    requests: AsyncIterable[Any] | Iterable[Any],
    timeout: float | None,
    metadata: Metadata,
) -> tuple[_Replies, asyncio.Task[None]]:
    replies = _Replies()
    stream = method.channel.new_stream(
        method.path, b"", False, timeout, metadata, replies.on_done, replies.on_message
    )
    stream.retryable = False  # its requests come from an iterator: sent once
    replies.stream = stream
    method.channel.start(stream)
    pump = asyncio.get_running_loop().create_task(
        _pump(method.channel, stream, requests, method.serialize)
    )
    return replies, pump


class StreamUnary(_Method):
    async def __call__(
        self, requests: AsyncIterable[Any] | Iterable[Any], *, timeout: float | None = None,
        metadata: Metadata = None, **_: Any,
    ) -> Any:  # fmt: skip
        replies, pump = _streamed(self, requests, timeout, metadata)
        try:
            reply = await replies.next(self.channel)
            if reply is None:
                raise grpc.aio.AioRpcError(
                    grpc.StatusCode.INTERNAL, grpc.aio.Metadata(), grpc.aio.Metadata(),
                    "the server sent no reply to a client-streaming call",
                )  # fmt: skip
            await replies.next(self.channel)
            return self.deserialize(reply)
        finally:
            if not pump.done():
                pump.cancel()


class StreamStream(_Method):
    def __call__(
        self, requests: AsyncIterable[Any] | Iterable[Any], *, timeout: float | None = None,
        metadata: Metadata = None, **_: Any,
    ) -> AsyncIterator[Any]:  # fmt: skip
        replies, pump = _streamed(self, requests, timeout, metadata)
        return _ReplyIterator(self, replies, pump)
