"""The built-in closed-loop load engine (runs inside a generator process).

C virtual users share a budget of N calls (or a deadline); each user sends its
next call as soon as the previous one finished. Every call is bounded by the
per-call deadline and every phase by ``max_level_s``, so a level always ends.
Calls are spread over ``connections`` channels, each its own HTTP/2
connection (a local subchannel pool stops grpcio from sharing one), so a
server's per-connection stream limit (100 for grpclib) does not cap a level.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import grpc

from grpcbench.errors import UsageError
from grpcbench.load.model import LoadResult, LoadSpec
from grpcbench.services.base import CallFunction
from grpcbench.services.registry import load_service
from grpcbench.stats.histogram import LatencyRecorder

CONNECT_TIMEOUT_S = 10.0
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]


def status_name(code: grpc.StatusCode) -> str:
    """``DEADLINE_EXCEEDED`` -> ``DeadlineExceeded``, as ghz and the seed print them."""
    if code is grpc.StatusCode.OK:
        return "OK"
    return "".join(part.title() for part in code.name.split("_"))


@dataclass
class _Budget:
    """Shared between the users of one phase: calls left, deadlines, progress."""

    calls_left: int | None
    ends_at: float | None
    hard_end: float
    done: int = 0
    truncated: bool = False

    def take(self) -> bool:
        now = time.monotonic()
        if now >= self.hard_end:
            self.truncated = self.calls_left is not None
            return False
        if self.ends_at is not None and now >= self.ends_at:
            return False
        if self.calls_left is not None:
            if self.calls_left <= 0:
                return False
            self.calls_left -= 1
        return True


async def _user(
    call: CallFunction,
    budget: _Budget,
    timeout_s: float,
    recorder: LatencyRecorder | None,
    statuses: Counter[str],
) -> None:
    clock = time.perf_counter_ns
    while budget.take():
        started = clock()
        try:
            await call(timeout_s)
            status = "OK"
        except grpc.aio.AioRpcError as error:
            status = status_name(error.code())
        elapsed_us = (clock() - started) // 1000
        budget.done += 1
        if recorder is not None:
            recorder.record(elapsed_us)
            statuses[status] += 1


async def _phase(
    calls: Sequence[CallFunction],
    spec: LoadSpec,
    requests: int,
    duration_s: float,
    recorder: LatencyRecorder | None,
    statuses: Counter[str],
    on_progress: Callable[[int], None] | None,
) -> _Budget:
    now = time.monotonic()
    budget = _Budget(
        calls_left=requests if requests else None,
        ends_at=now + duration_s if duration_s else None,
        hard_end=now + spec.max_level_s,
    )
    users = [
        asyncio.create_task(
            _user(calls[i % len(calls)], budget, spec.timeout_s, recorder, statuses)
        )
        for i in range(spec.concurrency)
    ]
    ticker = asyncio.create_task(_tick(budget, on_progress)) if on_progress else None
    try:
        await asyncio.gather(*users)
    finally:
        for task in users:
            task.cancel()
        if ticker:
            ticker.cancel()
    return budget


async def _tick(budget: _Budget, on_progress: Callable[[int], None]) -> None:
    while True:
        await asyncio.sleep(0.2)
        on_progress(budget.done)


async def _connect(spec: LoadSpec) -> list[grpc.aio.Channel]:
    channels = [
        grpc.aio.insecure_channel(spec.target, options=CHANNEL_OPTIONS)
        for _ in range(spec.connections)
    ]
    try:
        await asyncio.wait_for(
            asyncio.gather(*(channel.channel_ready() for channel in channels)), CONNECT_TIMEOUT_S
        )
    except TimeoutError:
        for channel in channels:
            await channel.close()
        raise UsageError(
            f"cannot connect to {spec.target} within {CONNECT_TIMEOUT_S:.0f}s"
        ) from None
    return channels


async def run_closed_loop(
    spec: LoadSpec,
    on_measurement_start: Callable[[], None],
    on_progress: Callable[[int], None],
) -> LoadResult:
    workload = load_service(spec.service).workload(spec.workload_params)
    channels = await _connect(spec)
    try:
        calls = [workload.bind(channel) for channel in channels]
        if spec.warmup_requests or spec.warmup_s:
            await _phase(calls, spec, spec.warmup_requests, spec.warmup_s, None, Counter(), None)
        on_measurement_start()
        recorder = LatencyRecorder()
        statuses: Counter[str] = Counter()
        cpu_start = time.process_time()
        wall_start = time.perf_counter()
        budget = await _phase(
            calls, spec, spec.requests, spec.duration_s, recorder, statuses, on_progress
        )
        wall_s = time.perf_counter() - wall_start
        cpu_s = time.process_time() - cpu_start
    finally:
        for channel in channels:
            await channel.close()
    return LoadResult(
        driver="builtin",
        concurrency=spec.concurrency,
        connections=spec.connections,
        statuses=dict(statuses),
        latency=recorder.summary(),
        wall_s=wall_s,
        client_cpu_s=cpu_s,
        truncated=budget.truncated,
    )
