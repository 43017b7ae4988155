"""Sending the callback loops' calls: which connection and method each call goes to,
its request and header block, and how it ended (``CallIssuer``), so the loops in
``load.callback_loops`` only pace and count."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from grpcbench.contract.calls import CallStats
from grpcbench.load.closed_loop import DURATION_STOP_MESSAGE
from grpcbench.load.wire_calls import WireUnaryCalls
from grpcbench.rpc.mix import weighted_order
from grpcbench.wire import status
from grpcbench.wire.stream import WireStream, unary_outcome

# A call ended by --duration-stop ignore: not a gRPC status, and never recorded.
IGNORED = -1


class CallIssuer:
    """Builds and sends one call's stream on the channel it picks (and, for a mix, of
    the method its cycle says)."""

    def __init__(
        self,
        calls: WireUnaryCalls,
        on_done: Callable[[WireStream], None],
        on_fatal: Callable[[Exception], None],
    ) -> None:
        self.calls = calls
        # A request that cannot be built (a bad feeder line, a template that fails):
        # the phase ends with it. It is raised from a reply's callback, inside the
        # connection's frame loop, where it would break the connection and leave
        # the call counted in flight for ever.
        self.on_fatal = on_fatal
        self.channels = calls.channels
        self.count = len(self.channels)
        self.on_done = on_done
        self.least_busy = calls.least_busy and self.count > 1
        self.in_flight = [0] * self.count  # per channel, counted when least_busy
        if self.least_busy:

            def counted(stream: WireStream) -> None:
                self.in_flight[stream.lane] -= 1
                on_done(stream)

            self.on_done = counted
        self.loop = asyncio.get_running_loop()
        plan = calls.plan
        self.methods = calls.methods
        self.method = self.methods[0]
        # A mix: each connection's next call's method, in proportion to the weights
        # (rpc.mix). One order per connection, so each carries the whole mix: with one
        # shared order, connection and method both went round by the call's number,
        # and with 10 connections on 8:1:1 each connection carried one method only.
        self.orders = (
            [weighted_order(plan.weights, plan.random_order) for _ in self.channels]
            if plan.parts
            else None
        )
        self.next = 0
        # Fixed requests (of one method, or a mix's) round-robin over the channels (the
        # common case): ``send`` skips the choices it does not need.
        self.simple = not (calls.per_user or self.least_busy) and all(
            method.fixed for method in self.methods
        )
        # Per method of a mix (by a call's ``part``): whether it is unary, whose OK the
        # callback loops record in their short way, streams or not beside it.
        self.unary_parts = tuple(not method.streaming for method in self.methods)

    def send(self, user: int, started: int, tag: int | None = None) -> None:
        """One call of virtual user ``user`` (its connection with per-user, its
        {{.WorkerID}}); ``tag`` (default: the user) comes back on the stream."""
        if self.simple:
            index = self.next
            self.next = (index + 1) % self.count
            orders = self.orders
            if orders is None:
                method = self.method
            else:  # a mix: this connection's next method
                part = next(orders[index])
                method = self.methods[part]
            stream = WireStream(
                method.blocks[index], method.body, True, self.on_done,
                started * 1e-9 + method.timeout_s,  # started: perf_counter_ns, as deadlines'
            )  # fmt: skip
            stream.tag = user if tag is None else tag
            stream.lane = index
            stream.started = started
            if orders is not None:
                stream.part = part
            channel = self.channels[index]
            connection = channel.connection
            if connection is not None and not (connection.draining or connection.closed):
                connection.start_unary(stream)  # channel.start's first case, inline
            else:
                channel.start(stream)
            return
        if self.calls.per_user:
            index = user % self.count
        elif self.least_busy:
            index = min(range(self.count), key=self.in_flight.__getitem__)
            self.in_flight[index] += 1
        else:
            index = self.next
            self.next = (index + 1) % self.count
        channel = self.channels[index]
        part = 0
        method = self.method
        if self.orders is not None:
            part = next(self.orders[index])
            method = self.methods[part]
        if method.fixed:
            block, body = method.blocks[index], method.body
        else:
            assert method.next_request is not None
            try:
                request, metadata = method.next_request(user)
            except Exception as error:  # any of it ends the phase, said once
                self.on_fatal(error)
                return
            block = channel.request_fields(
                method.path, method.timeout_s, metadata or None, varying=True
            )
            body = b""
        deadline = started * 1e-9 + method.timeout_s
        stream = WireStream(block, body, True, self.on_done, deadline)
        stream.tag = user if tag is None else tag
        stream.lane = index
        stream.part = part
        stream.started = started
        if not method.fixed:
            channel.start_framed(stream, request)  # over --max-send-message-size: fails
            return
        connection = channel.connection
        if connection is not None and not (connection.draining or connection.closed):
            connection.start_unary(stream)  # a mix's request: its kept frames, as above
        else:
            channel.start(stream)

    def outcome(self, stream: WireStream) -> tuple[int, str, CallStats | None]:
        """A call's status, message and (a stream's) what came back, as the coroutine
        loops record them."""
        method = self.methods[stream.part]
        if not method.streaming:
            code, message = unary_outcome(stream)
            return code, message, None
        first = stream.first_at - stream.started / 1e9 if stream.messages else 0.0
        stats = CallStats(
            stream.messages, 0, stream.bytes, max(first, 0.0), sent=method.sent,
            gaps_us=stream.gaps_us or (), together=stream.together,
        )  # fmt: skip
        return stream.status, stream.message, stats if stream.status == status.OK else None

    def end_in_flight(self, action: str) -> None:
        """--duration-stop close|ignore at the duration's end: every call still open
        ends Cancelled (ignore: ``IGNORED``, which the loops do not record)."""
        self._cancel_open(
            DURATION_STOP_MESSAGE, IGNORED if action == "ignore" else status.CANCELLED
        )

    def cancel_all(self) -> None:
        """The watchdog: end every call still open, each as DeadlineExceeded."""
        self._cancel_open("level time limit", status.DEADLINE_EXCEEDED)

    def _cancel_open(self, message: str, code: int) -> None:
        for channel in self.channels:
            for stream in channel.open_streams():
                channel.cancel(stream, message, code)
