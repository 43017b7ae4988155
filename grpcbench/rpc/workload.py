"""The client workload of ``--call``: any method, of any of the four method types.

Requests go out pre-serialized (the channel's serializer is the identity) and
replies are counted as raw bytes (no deserializer): the client spends its time
on the call, not on protobuf, and the byte counts are the wire's.
- unary: one request, one reply;
- server streaming: one request, then every reply until the server ends the
  stream (messages, bytes and time to the first message are reported);
- client streaming: the stream's requests (the data list, or --stream-messages
  of them), one reply;
- bidi: the stream's requests sent, then every reply until the server closes.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import grpc

from grpcbench.contract.calls import CallFunction, CallStats, ReplyCounter, UnaryPlan
from grpcbench.rpc.call import CallMessages, MethodCall
from grpcbench.rpc.metadata_text import Metadata
from grpcbench.rpc.templates import CURRENT_WORKER, WorkerIds


class _Raw(ReplyCounter):
    """Replies arrive as bytes: their length is their serialized size."""

    @staticmethod
    def size(reply: Any) -> int:
        return len(reply)


@dataclass
class SentLog:
    """What one call's client stream sent: how many messages, how late each was on its
    pacer (--stream-interval), and when each not yet answered went out
    (--stream-round-trip: the reply that answers it pops it)."""

    count: int = 0
    lags_us: list[int] = field(default_factory=list)
    unanswered: deque[float] | None = None


async def _requests(
    messages: Sequence[bytes], interval_s: float, duration_s: float, log: SentLog
) -> AsyncIterator[bytes]:
    """A client stream's messages: back to back, or one every ``interval_s`` (ghz's
    --stream-interval) on a pacer from the stream's start, so a stream the
    server or the window holds back falls behind it, and each message's lag says
    by how much (an open loop of messages, where sleeping ``interval_s`` after each
    send would slow down with the server); none sent once the stream is
    ``duration_s`` old (--stream-call-duration), which then half-closes it."""
    clock = time.perf_counter
    started = due = clock()
    for number, message in enumerate(messages):
        if number and interval_s:
            due = started + number * interval_s
            wait = due - clock()
            if wait > 0:
                await asyncio.sleep(wait)
        now = clock()
        if duration_s and now - started >= duration_s:
            return
        if number and interval_s:
            log.lags_us.append(max(0, int((now - due) * 1e6)))
        log.count += 1
        if log.unanswered is not None:
            log.unanswered.append(now)
        yield message


class MethodWorkload:
    """Binds the call to a channel, per its method type; every virtual user gets a worker id."""

    def __init__(
        self, call: MethodCall, index: int = 0, count: int = 1, worker_ids: WorkerIds | None = None
    ) -> None:
        self.messages = CallMessages(call, index, count)
        self.method_type = call.schema.method_type
        self.path = call.schema.path
        self.index = index
        self.worker_ids: Callable[[int], str] = worker_ids or WorkerIds(prefix=call.worker_prefix)
        self.workers: dict[asyncio.Task[Any], str] = {}
        self.pacing = (call.stream_interval_s, call.stream_duration_s)

    def as_preflight(self, number: int) -> None:
        """Render this workload's calls as the pre-flight call: worker "preflight" and
        RequestNumber ``number``, one the level's calls do not use (ghz's run, which has
        no pre-flight call, numbers its calls from 0; so does each level here)."""
        self.messages.next_number = number
        self.worker_ids = lambda user: "preflight"

    def _worker_id(self) -> str:
        slot = CURRENT_WORKER.get()
        if slot is not None:  # an open loop's call: one of its c workers
            return self.worker_ids(slot)
        task = asyncio.current_task()
        worker = self.workers.get(task) if task else None
        if worker is None:
            worker = self.worker_ids(len(self.workers))
            if task is not None:
                self.workers[task] = worker
        return worker

    def next_call(self) -> tuple[Sequence[bytes], Metadata]:
        return self.messages.next(self._worker_id())

    def unary_plan(self) -> UnaryPlan | None:
        """A unary method runs on the wire transport's callback loops; each virtual
        user keeps its worker id, as it does here with tasks. So does a stream whose
        requests are fixed and unpaced (``stream_plan``)."""
        if self.method_type != "unary":
            return self.stream_plan()
        messages = self.messages
        fixed = messages.fixed_messages
        if fixed is not None and len(fixed) == 1 and messages.fixed_metadata is not None:
            return UnaryPlan(self.path, fixed[0], messages.fixed_metadata)
        worker_ids = self.worker_ids

        def next_request(user: int) -> tuple[bytes, Metadata]:
            requests, metadata = messages.next(worker_ids(user))
            return requests[0], metadata

        return UnaryPlan(self.path, next_request=next_request)

    def stream_plan(self) -> UnaryPlan | None:
        """A stream whose requests are the same every call and sent back to back (no
        --stream-interval/--stream-call-duration, no --stream-messages count): the
        callback loops run it as they run unary calls, alone or in a mix."""
        messages = self.messages
        fixed = messages.fixed_messages
        if (
            self.method_type == "unary" or fixed is None or messages.fixed_metadata is None
            or any(self.pacing) or messages.call.stream_messages or messages.call.round_trip
        ):  # fmt: skip
            return None
        if not messages.streams and len(fixed) > 1:
            return None  # a list is cycled call by call, one request each (next_call)
        requests = tuple(fixed) if messages.streams else (fixed[0],)
        return UnaryPlan(
            self.path,
            metadata=messages.fixed_metadata,
            method_type=self.method_type,
            requests=requests,
        )

    def bind(self, channel: grpc.aio.Channel) -> CallFunction:
        method_type = self.method_type
        if method_type == "unary":
            return self._unary(channel)
        if method_type == "server-streaming":
            return self._server_streaming(channel)
        if method_type == "client-streaming":
            return self._client_streaming(channel)
        return self._bidi(channel)

    def _unary(self, channel: grpc.aio.Channel) -> CallFunction:
        method = channel.unary_unary(self.path)

        async def call(timeout: float) -> None:
            requests, metadata = self.next_call()
            await method(requests[0], timeout=timeout, metadata=metadata or None)

        return call

    def _server_streaming(self, channel: grpc.aio.Channel) -> CallFunction:
        call_settings = self.messages.call
        if call_settings.stream_messages or call_settings.stream_duration_s:
            return self._server_stream_cut(
                channel, call_settings.stream_messages, call_settings.stream_duration_s
            )
        counted = getattr(channel, "counted_unary_stream", None)
        if counted is not None:  # the wire stack counts replies without a wake-up each

            async def counted_call(timeout: float) -> CallStats:
                requests, metadata = self.next_call()
                messages, size, first, gaps_us, together = await counted(
                    self.path, requests[0], timeout, metadata or None
                )
                # --call counts no items
                return CallStats(messages, 0, size, first, gaps_us=gaps_us, together=together)

            return counted_call
        method = channel.unary_stream(self.path)

        async def call(timeout: float) -> CallStats:
            requests, metadata = self.next_call()
            counter = _Raw()
            async for reply in method(requests[0], timeout=timeout, metadata=metadata or None):
                counter.add(reply)
            return counter.stats(items=0)

        return call

    def _server_stream_cut(
        self, channel: grpc.aio.Channel, limit: int, duration_s: float
    ) -> CallFunction:
        """ghz's --stream-call-count and --stream-call-duration on a server stream: the
        client cancels the call once ``limit`` replies came, or ``duration_s`` passed
        (ghz's callCancel). The call did what it was asked: it counts as OK, where ghz
        counts it Canceled; a call the server ended first is as the server ended it."""
        method = channel.unary_stream(self.path)

        async def call(timeout: float) -> CallStats:
            requests, metadata = self.next_call()
            counter = _Raw()
            replies = method(requests[0], timeout=timeout, metadata=metadata or None)
            try:
                async with asyncio.timeout(duration_s or None):
                    async for reply in replies:
                        counter.add(reply)
                        if limit and counter.messages >= limit:
                            break
            except TimeoutError:  # --stream-call-duration's end (a deadline raises grpc's)
                pass
            finally:
                replies.cancel()
            return counter.stats(items=0)

        return call

    def _client_streaming(self, channel: grpc.aio.Channel) -> CallFunction:
        method = channel.stream_unary(self.path)

        async def call(timeout: float) -> CallStats:
            requests, metadata = self.next_call()
            log = SentLog()
            started = time.perf_counter()
            reply = await method(
                _requests(requests, *self.pacing, log), timeout=timeout,
                metadata=metadata or None,
            )  # fmt: skip
            first = time.perf_counter() - started
            return CallStats(1, 0, len(reply), first, sent=log.count, send_lags_us=log.lags_us)

        return call

    def _bidi(self, channel: grpc.aio.Channel) -> CallFunction:
        method = channel.stream_stream(self.path)

        round_trip = self.messages.call.round_trip

        async def call(timeout: float) -> CallStats:
            requests, metadata = self.next_call()
            log = SentLog(unanswered=deque() if round_trip else None)
            counter = _Raw(log.unanswered)
            stream = method(
                _requests(requests, *self.pacing, log), timeout=timeout,
                metadata=metadata or None,
            )  # fmt: skip
            async for reply in stream:
                counter.add(reply)
            return replace(counter.stats(items=0, sent=log.count), send_lags_us=log.lags_us)

        return call
