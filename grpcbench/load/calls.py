"""One timed call, and the call source a level's users share.

Both load engines (closed and open loop) go through ``call_status`` so every
outcome is a gRPC status name and no error ever escapes into the engine.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc

from grpcbench.errors import UsageError
from grpcbench.load.connections import Policy
from grpcbench.load.model import LoadSpec
from grpcbench.services.base import CallFunction, CallStats, Workload, WorkloadError
from grpcbench.stats.histogram import LatencyRecorder

CONNECT_TIMEOUT_S = 10.0
# Its own subchannel pool per channel: grpcio would otherwise share one TCP
# connection between channels with the same target and arguments.
# No cap on received messages: a benchmark client must not reject big replies.
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1), ("grpc.max_receive_message_length", -1)]


def status_name(code: grpc.StatusCode) -> str:
    """``DEADLINE_EXCEEDED`` -> ``DeadlineExceeded``, as ghz and the seed print them."""
    if code is grpc.StatusCode.OK:
        return "OK"
    return "".join(part.title() for part in code.name.split("_"))


async def call_status(call: CallFunction, timeout_s: float) -> tuple[str, CallStats | None]:
    """The call's status name, and its stream statistics when it has some."""
    try:
        stats = await asyncio.wait_for(call(timeout_s), timeout_s + 1.0)
    except grpc.aio.AioRpcError as error:
        return status_name(error.code()), None
    except TimeoutError:
        # The deadline passed outside the RPC itself (e.g. while connecting).
        return "DeadlineExceeded", None
    except WorkloadError as error:
        return error.status, None
    return "OK", stats


def open_channel(target: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS)


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


class PerRequestCalls:
    """Opens a fresh connection for every call; records its set-up time apart."""

    def __init__(self, target: str, workload: Workload, connect: LatencyRecorder) -> None:
        self.target = target
        self.workload = workload
        self.connect = connect
        self.recording = False  # switched on after warm-up

    async def __call__(self, timeout: float) -> CallStats | None:
        """Connect and call within one deadline, as a real per-request client would."""
        started = time.perf_counter_ns()
        channel = open_channel(self.target)
        try:
            await asyncio.wait_for(channel.channel_ready(), timeout)
            connect_ns = time.perf_counter_ns() - started
            if self.recording:
                self.connect.record(connect_ns // 1000)
            return await self.workload.bind(channel)(max(timeout - connect_ns / 1e9, 0.001))
        finally:
            await channel.close()


@asynccontextmanager
async def call_source(
    spec: LoadSpec, workload: Workload, connect: LatencyRecorder
) -> AsyncIterator[PooledCalls | PerRequestCalls]:
    """The callable every user of a level calls, per the connection strategy."""
    if spec.connection_mode == "per-request":
        yield PerRequestCalls(spec.target, workload, connect)
        return
    channels = [open_channel(spec.target) for _ in range(max(1, spec.connections))]
    try:
        try:
            await asyncio.wait_for(
                asyncio.gather(*(channel.channel_ready() for channel in channels)),
                CONNECT_TIMEOUT_S,
            )
        except TimeoutError:
            raise UsageError(
                f"cannot connect to {spec.target} within {CONNECT_TIMEOUT_S:.0f}s"
            ) from None
        yield PooledCalls([workload.bind(channel) for channel in channels], spec.pool_policy)  # type: ignore[arg-type]
    finally:
        for channel in channels:
            await channel.close()
