"""One timed call, and the call source a level's users share.

Every outcome is a gRPC status name and no error escapes into the engine:
the open loop goes through ``call_status``; the closed loop's users inline
the same rules on their hot path (``closed_loop._user``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc

from grpcbench.base import defaults
from grpcbench.base.errors import UsageError
from grpcbench.contract.calls import (
    CallFunction,
    CallStats,
    UnaryPlan,
    Workload,
    WorkloadError,
)
from grpcbench.model.connections import Policy
from grpcbench.model.load_result import GeneratorJob
from grpcbench.rpc.client_options import DEFAULT, ClientOptions
from grpcbench.rpc.client_stacks import open_stack_channel, stack_info
from grpcbench.rpc.security import PLAINTEXT, ChannelSecurity
from grpcbench.rpc.status_names import status_name
from grpcbench.stats.histogram import LatencyRecorder

if TYPE_CHECKING:
    from grpcbench.load.wire_calls import WireUnaryCalls


async def call_status(call: CallFunction, timeout_s: float) -> tuple[str, CallStats | None, str]:
    """The call's status name, its stream statistics when it has some, and the
    error's message ("" when it ended OK).

    No timer of its own: every RPC carries the deadline ``timeout_s`` (grpc
    enforces it), and the phase's watchdog bounds whatever else a workload
    does (see ``closed_loop.watch_phase``)."""
    try:
        stats = await call(timeout_s)
    except grpc.aio.AioRpcError as error:
        return status_name(error.code()), None, error.details() or ""
    except TimeoutError:
        # The deadline passed outside the RPC itself (e.g. while connecting).
        return "DeadlineExceeded", None, ""
    except WorkloadError as error:
        return error.status, None, str(error)
    return "OK", stats, ""


def open_channel(
    target: str, security: ChannelSecurity = PLAINTEXT, stack: str = defaults.CLIENT_STACK,
    connect_timeout_s: float = 10.0, client: ClientOptions = DEFAULT,
) -> Any:  # fmt: skip
    """A connection of its own, plaintext or TLS, on client stack ``stack``
    (``rpc.client_stacks``): every stack's channel has the methods workloads bind to,
    ``channel_ready`` and ``close``."""
    return open_stack_channel(stack, target, security, connect_timeout_s, client)


class PooledCalls:
    """Hands out calls bound to a fixed set of channels, per call."""

    def __init__(self, calls: list[CallFunction], policy: Policy) -> None:
        self.calls = calls
        self.in_flight = [0] * len(calls)
        self.next = 0
        self.least_busy = policy == "least-busy"

    async def __call__(self, timeout: float) -> CallStats | None:
        if self.least_busy:
            index = min(range(len(self.calls)), key=self.in_flight.__getitem__)
        else:
            index = self.next
            self.next = (index + 1) % len(self.calls)
        self.in_flight[index] += 1
        try:
            return await self.calls[index](timeout)
        finally:
            self.in_flight[index] -= 1


@dataclass(frozen=True)
class Dialer:
    """How a level opens connections of its own: the target and everything about
    reaching it, in one place for every connection strategy."""

    target: str
    security: ChannelSecurity = PLAINTEXT
    stack: str = defaults.CLIENT_STACK
    connect_timeout_s: float = 10.0
    client: ClientOptions = DEFAULT

    @classmethod
    def of(cls, spec: GeneratorJob) -> Dialer:
        return cls(
            spec.target, ChannelSecurity.from_json(spec.security), spec.settings.client_stack,
            spec.settings.connect_timeout_s, ClientOptions.of(spec.settings),
        )  # fmt: skip

    def open(self) -> Any:
        return open_channel(
            self.target, self.security, self.stack, self.connect_timeout_s, self.client
        )

    async def connect(self, timeout: float) -> tuple[Any, int]:
        """A new connection, ready within ``timeout`` (and --connect-timeout), and how
        long its set-up took (ns); closed on failure."""
        limit = min(timeout, self.connect_timeout_s)
        started = time.perf_counter_ns()
        channel = open_channel(self.target, self.security, self.stack, limit, self.client)
        try:
            await asyncio.wait_for(channel.channel_ready(), limit)
        except ConnectionError as error:  # the wire stack's refusal: the status grpc gives it
            await channel.close()
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), str(error)
            ) from None
        except BaseException:
            await channel.close()
            raise
        return channel, time.perf_counter_ns() - started


class PerRequestCalls:
    """Opens a fresh connection for every call; records its set-up time apart."""

    def __init__(self, dialer: Dialer, workload: Workload, connect: LatencyRecorder) -> None:
        self.dialer = dialer
        self.workload = workload
        # A connection per call: a mix's calls share one order (``rpc.mix``), which a
        # binding per connection would restart at every call.
        self.bind = getattr(workload, "bind_sharing_order", workload.bind)
        self.connect = connect
        self.recording = False  # switched on after warm-up

    async def __call__(self, timeout: float) -> CallStats | None:
        """Connect and call within one deadline, as a real per-request client would."""
        channel, connect_ns = await self.dialer.connect(timeout)
        try:
            if self.recording:
                self.connect.record(connect_ns // 1000)
            return await self.bind(channel)(max(timeout - connect_ns / 1e9, 0.001))
        finally:
            await channel.close()


class PerUserCalls:
    """Every virtual user (an asyncio task) calls on a connection of its own."""

    def __init__(self, calls: list[CallFunction]) -> None:
        self.calls = calls
        self.owner: dict[asyncio.Task[Any], CallFunction] = {}

    async def __call__(self, timeout: float) -> CallStats | None:
        task = asyncio.current_task()
        assert task is not None
        call = self.owner.get(task)
        if call is None:  # a user's first call: its connection, for the whole level
            call = self.owner[task] = self.calls[len(self.owner) % len(self.calls)]
        return await call(timeout)


class CheckoutCalls:
    """A check-out pool: a call takes an idle connection or opens a new one, and gives
    it back afterwards if fewer than ``size`` are idle (else closes it)."""

    def __init__(
        self, dialer: Dialer, workload: Workload, connect: LatencyRecorder, size: int
    ) -> None:
        self.dialer = dialer
        self.workload = workload
        self.connect = connect
        self.size = size
        self.idle: list[tuple[Any, CallFunction]] = []
        self.recording = False  # switched on after warm-up

    async def __call__(self, timeout: float) -> CallStats | None:
        connect_ns = 0
        if self.idle:
            channel, call = self.idle.pop()
        else:
            channel, connect_ns = await self.dialer.connect(timeout)
            call = self.workload.bind(channel)
            if self.recording:
                self.connect.record(connect_ns // 1000)
        try:
            return await call(max(timeout - connect_ns / 1e9, 0.001))
        finally:
            if len(self.idle) < self.size:
                self.idle.append((channel, call))
            else:
                await channel.close()
            # The caller hands its reply on before it checks out again (the seed's
            # handler answered an HTTP request first): every call that ended in this
            # turn of the loop is given back before any of them takes one.
            await asyncio.sleep(0)

    async def close(self) -> None:
        for channel, _ in self.idle:
            await channel.close()
        self.idle.clear()


@asynccontextmanager
async def call_source(
    spec: GeneratorJob, workload: Workload, connect: LatencyRecorder
) -> AsyncIterator[CallFunction | WireUnaryCalls]:
    """The callable every user of a level calls, per the connection strategy.

    On the wire stack, a workload with a ``unary_plan`` over pooled or per-user
    connections yields ``load.wire_calls.WireUnaryCalls``, which the engine runs on
    its callback loops."""
    dialer = Dialer.of(spec)
    if spec.connection_mode == "per-request":
        yield PerRequestCalls(dialer, workload, connect)
        return
    if spec.connection_mode == "checkout":
        checkout = CheckoutCalls(dialer, workload, connect, max(1, spec.share.connections))
        try:
            yield checkout
        finally:
            await checkout.close()
        return
    limit = dialer.connect_timeout_s
    channels = [dialer.open() for _ in range(max(1, spec.share.connections))]
    try:
        try:
            await asyncio.wait_for(
                asyncio.gather(*(channel.channel_ready() for channel in channels)), limit
            )
        except TimeoutError:
            raise UsageError(
                f"cannot connect to {spec.target} within {limit:g}s (--connect-timeout)"
            ) from None
        except ConnectionError as error:
            raise UsageError(str(error)) from None
        plan = getattr(workload, "unary_plan", None)
        fast = (  # think time: a user's pause, which only the coroutine loop has
            stack_info(dialer.stack).callback_loops and plan is not None
            and spec.settings.think_time is None
        )  # fmt: skip
        unary = plan() if fast and plan is not None else None
        if unary is not None and not fixed_requests_fit(unary, dialer.client.max_send_bytes):
            unary = None  # every call fails ResourceExhausted: the general path says so
        if unary is not None:
            from grpcbench.load.wire_calls import WireUnaryCalls

            yield WireUnaryCalls(
                channels, unary, spec.settings.timeout_s,
                per_user=spec.connection_mode == "per-user",
                least_busy=spec.pool_policy == "least-busy",
            )  # fmt: skip
            return
        calls = [workload.bind(channel) for channel in channels]
        if spec.connection_mode == "per-user":
            yield PerUserCalls(calls)
        elif len(calls) == 1:  # one connection: nothing to choose, no layer per call
            yield calls[0]
        else:
            yield PooledCalls(calls, spec.pool_policy)  # type: ignore[arg-type]
    finally:
        for channel in channels:
            await channel.close()


def fixed_requests_fit(plan: UnaryPlan, max_send: int) -> bool:
    """Whether every request a plan fixes in advance is within --max-send-message-size
    (0: no limit). The callback loops frame those once, before the first call; a
    request made per call is checked as it is framed, and fails only its call."""
    if not max_send:
        return True
    parts = plan.parts or (plan,)
    fixed = [
        request
        for part in parts
        for request in ((part.request,) if part.request is not None else part.requests)
    ]
    return all(len(request) <= max_send for request in fixed)
