"""An interactive bidi call inside a flow (k6's ``Stream``): send, await a reply, decide,
send again.

    async with client.conversation("echo.Echo/Chat", name="chat") as talk:
        await talk.send({"message": "hello"})
        reply = await talk.receive()
        if reply.message == "hello":
            await talk.send({"message": "again"})
            await talk.receive()

``client.bidi`` sends a list and then reads every reply; a conversation is for the
client whose next message depends on the last reply. It is one step, timed from
its start until the server's status, and counted under its name as other steps
are. Leaving the ``async with`` block ends the sending side and reads what the
server still sends, so its status is known; an error in the block cancels the call
(the step is counted Cancelled, and the error goes on into the flow).

The requests go through an async iterator fed by ``send``, which grpc.aio's
``stream_stream`` and the wire stack's both take, so a conversation works on either
client stack without a write/read API of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Any

import grpc

from grpcbench.rpc.status_names import status_name

_END = object()  # put on the outbox by ``close``: the sending side's END_STREAM


class Conversation:
    """One bidi call a flow steers message by message; made by ``client.conversation``."""

    def __init__(
        self, start: Callable[[AsyncIterator[Any]], Any], request: Callable[[Any], Any],
        record: Callable[[str, int, str], None],
    ) -> None:  # fmt: skip
        self._start = start  # the step's call on the channel, given the requests to send
        self._request = request  # a dict or a message -> the request message
        self._record = record  # (status, latency_us, message): the step's recorder
        self._outbox: asyncio.Queue[Any] = asyncio.Queue()
        self._call: Any = None
        self._replies: AsyncIterator[Any] | None = None
        self._started = 0
        self._closed = False
        self.sent = 0
        self.received = 0

    async def __aenter__(self) -> Conversation:
        self._started = time.perf_counter_ns()
        self._call = self._start(self._outgoing())
        self._replies = self._call.__aiter__()
        return self

    async def _outgoing(self) -> AsyncIterator[Any]:
        while (message := await self._outbox.get()) is not _END:
            yield message

    async def send(self, request: Any) -> None:
        """Queue one request; it goes out as the call's stream can take it."""
        if self._closed:
            raise RuntimeError("this conversation's sending side is closed")
        self._outbox.put_nowait(self._request(request))
        self.sent += 1

    async def receive(self) -> Any | None:
        """The next reply; None once the server has ended the call with OK.
        Raises ``grpc.aio.AioRpcError`` when it ended with another status."""
        assert self._replies is not None, "use a conversation in `async with`"
        try:
            reply = await self._replies.__anext__()
        except StopAsyncIteration:
            return None
        self.received += 1
        return reply

    def close(self) -> None:
        """End the sending side (END_STREAM); replies can still be received."""
        if not self._closed:
            self._closed = True
            self._outbox.put_nowait(_END)

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None,
        _: TracebackType | None,
    ) -> None:  # fmt: skip
        status, message = "OK", ""
        try:
            if error is None:
                self.close()
                while await self.receive() is not None:  # the rest, and the status
                    pass
            elif isinstance(error, grpc.aio.AioRpcError):
                status, message = status_name(error.code()), error.details() or ""
            else:
                status, message = "Cancelled", f"the flow raised {kind.__name__ if kind else ''}"
                self._call.cancel()
        except grpc.aio.AioRpcError as ended:
            status, message = status_name(ended.code()), ended.details() or ""
            raise
        finally:
            self._record(status, (time.perf_counter_ns() - self._started) // 1000, message)
