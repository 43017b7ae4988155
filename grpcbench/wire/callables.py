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


def _ended(stream: WireStream) -> None:
    """A call's end callback once it has ended (``finish`` calls it at most once)."""


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
        # The stream holds our bound methods and we hold it: a cycle per call, which only
        # the cyclic GC could free (13% of a flow's CPU). Ended, it needs them no more.
        stream.on_message = None
        stream.on_done = _ended
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
            await self._woken(channel, stream)
        return self.messages.popleft()

    async def ended(self, channel: WireChannel, most: int | None = None) -> None:
        """Wait for the call's end, or for more than ``most`` replies: what a caller that
        takes the replies whole awaits, in one wait where reading them one by one took
        one per reply and one more for the end."""
        stream = self.stream
        assert stream is not None
        messages = self.messages
        while stream.state != CLOSED and (most is None or len(messages) <= most):
            await self._woken(channel, stream)

    async def _woken(self, channel: WireChannel, stream: WireStream) -> None:
        """Until a reply or the end arrives; cancelled, the call is cancelled too."""
        self.waiter = _loop_of(stream).create_future()
        try:
            await self.waiter
        except asyncio.CancelledError:
            channel.cancel(stream)
            raise
        finally:
            self.waiter = None


def _loop_of(stream: WireStream) -> asyncio.AbstractEventLoop:
    """The loop a call runs on: its connection's, known without asking asyncio, whose
    ``get_running_loop`` makes a getpid() system call each time on Python 3.11 (11% of
    a flow's CPU on this project's VM)."""
    connection = stream.connection
    return connection.loop if connection is not None else asyncio.get_running_loop()


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
        await replies.ended(self.channel, most=1)
        messages, stream = replies.messages, replies.stream
        assert stream is not None
        if len(messages) > 1:
            self.channel.cancel(stream)  # a no-op once it has ended
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.INTERNAL, grpc.aio.Metadata(), grpc.aio.Metadata(),
                EXTRA_REPLY,
            )  # fmt: skip
        if stream.status != status.OK:
            raise rpc_error(stream)
        # OK without a message: grpc.aio returns None too
        return self.deserialize(messages[0]) if messages else None


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

    async def collect(self) -> list[Any]:
        """Every reply, once the call has ended OK (its error otherwise): what a flow's
        ``server_stream`` and ``bidi`` return, in one wait (``_Replies.ended``)."""
        replies = self.replies
        try:
            await replies.ended(self.method.channel)
        finally:
            self._stop_pump()
        stream = replies.stream
        assert stream is not None
        if stream.status != status.OK:
            raise rpc_error(stream)
        deserialize, messages = self.method.deserialize, replies.messages
        collected = [deserialize(message) for message in messages]
        messages.clear()
        return collected

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
