"""Runs one level inside a generator process: warm-up, then the measured phase.

Chooses the closed loop (virtual users) or the open loop (``rate`` > 0), over
the connection strategy and client stack of the spec (the wire stack's
callback loops for plain unary workloads and fixed streams), and returns the
measured ``LoadResult``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from grpcbench.base.errors import UsageError
from grpcbench.contract.calls import CallFunction, Workload
from grpcbench.load.callback_loops import wire_closed_loop_phase, wire_open_loop_phase
from grpcbench.load.calls import CheckoutCalls, PerRequestCalls, call_source
from grpcbench.load.closed_loop import Budget, closed_loop_phase
from grpcbench.load.collector import tuned_for_load
from grpcbench.load.open_loop import open_loop_phase, share_pacer
from grpcbench.load.recorders import (
    CheckRecorders,
    DetailedLevelRecorders,
    LevelRecorders,
    StepRecorders,
    level_recorders,
)
from grpcbench.load.schedule_count import ScheduleCount
from grpcbench.load.shared_calls import SharedCalls
from grpcbench.load.wire_calls import WireUnaryCalls
from grpcbench.model.intervals import (
    IntervalFigures,
    cut_every_interval,
    finish,
    with_offered,
)
from grpcbench.model.level_parts import MethodFigures
from grpcbench.model.load_result import GeneratorJob, LoadResult
from grpcbench.observe.cpu_share import run_queue_wait_s
from grpcbench.observe.memory_peak import current_rss_bytes, peak_rss_bytes
from grpcbench.observe.timeline import TimelineRecorder, sample
from grpcbench.services.registry import load_service
from grpcbench.stats.histogram import LatencyRecorder


class PhaseLoop(Protocol):
    """One phase (warm-up or measured) of a level's calls: every loop has this shape."""

    def __call__(
        self,
        call: Any,
        spec: GeneratorJob,
        budget: Budget,
        recorders: LevelRecorders | None,
        on_progress: Callable[[int], None] | None,
        /,
    ) -> Awaitable[None]: ...


@dataclass(frozen=True)
class Loops:
    """A call source's closed loop (virtual users) and open loop (a pacer)."""

    closed: PhaseLoop
    open: PhaseLoop

    def for_spec(self, spec: GeneratorJob) -> PhaseLoop:
        return self.open if spec.share.rate else self.closed


# Awaitable calls run on the coroutine loops; a source with loops of its own is listed
# here by its type (the wire stack's callback loops for plain unary and fixed streams).
COROUTINE_LOOPS = Loops(closed=closed_loop_phase, open=open_loop_phase)
OWN_LOOPS: dict[type, Loops] = {
    WireUnaryCalls: Loops(closed=wire_closed_loop_phase, open=wire_open_loop_phase),
}


def _phase(
    call: CallFunction | WireUnaryCalls,
    spec: GeneratorJob,
    budget: Budget,
    measure: LevelRecorders | None,
    on_progress: Callable[[int], None] | None,
) -> Awaitable[None]:
    loop = OWN_LOOPS.get(type(call), COROUTINE_LOOPS).for_spec(spec)
    return loop(call, spec, budget, measure, on_progress)


def make_workload(spec: GeneratorJob) -> Workload:
    """``--call``'s method call, else the service's own Python workload."""
    if spec.flow is not None:
        from grpcbench.rpc.flow import FlowWorkload, PlannedFlow

        return FlowWorkload(PlannedFlow.from_json(spec.flow), spec.share.index, spec.share.of)
    if spec.call is not None:
        from grpcbench.rpc.call import MethodCall
        from grpcbench.rpc.mix import MixWorkload
        from grpcbench.rpc.templates import WorkerIds
        from grpcbench.rpc.workload import MethodWorkload

        call = MethodCall.from_json(spec.call)
        connections = spec.settings.connections_for(spec.plan) or spec.plan.concurrency
        ids = WorkerIds(first_worker(spec), connections, call.worker_prefix)
        if call.mix:
            return MixWorkload(call, spec.share.index, spec.share.of, ids)
        return MethodWorkload(call, spec.share.index, spec.share.of, ids)
    service = load_service(spec.service)
    if service.workload is None:
        raise UsageError(f"service {spec.service} has no client workload: give --call")
    return service.workload(spec.workload_params)


def _feed_left(workload: Workload) -> int | None:
    """The calls a ``--feed once`` feeder has left (the level ends when its data runs
    out); None for any other workload."""
    messages = getattr(workload, "messages", None)
    left: int | None = messages.requests_left() if messages is not None else None
    return left


def _capped(calls: int | None, left: int | None) -> int | None:
    """A phase's call count (None: unbounded) within ``left`` (None: no limit)."""
    if left is None:
        return calls
    return left if calls is None else min(calls, left)


def first_worker(spec: GeneratorJob) -> int:
    """This generator's first virtual user, numbered across the level (ghz's
    {{.WorkerID}}): after the users of the generators before it (``builtin.split``)."""
    concurrency, parts = spec.plan.concurrency, spec.share.of
    return sum(
        concurrency // parts + (1 if i < concurrency % parts else 0)
        for i in range(spec.share.index)
    )


async def run_level(
    spec: GeneratorJob,
    on_measurement_start: Callable[[], None],
    on_progress: Callable[[int, int], None],
    before_measuring: Callable[[], Awaitable[None]] | None = None,
    shared: SharedCalls | None = None,
    on_interval: Callable[[IntervalFigures], None] | None = None,
    on_measurement_end: Callable[[], None] | None = None,
) -> LoadResult:
    """One level's share of the load, with the cyclic GC tuned for it (``collector``)."""
    with tuned_for_load():
        return await _run_level(
            spec, on_measurement_start, on_progress, before_measuring, shared, on_interval,
            on_measurement_end,
        )  # fmt: skip


async def _run_level(
    spec: GeneratorJob,
    on_measurement_start: Callable[[], None],
    on_progress: Callable[[int, int], None],
    before_measuring: Callable[[], Awaitable[None]] | None,
    shared: SharedCalls | None,
    on_interval: Callable[[IntervalFigures], None] | None,
    on_measurement_end: Callable[[], None] | None,
) -> LoadResult:
    """``before_measuring``: awaited between warm-up and the measured phase (a
    cluster's barrier, so every worker measures over the same window). ``shared``:
    where to take more measured calls once this share runs low (a cluster's pool).
    ``on_interval``: each interval of ``--interval`` as it closes (the live view).
    ``on_measurement_end``: as soon as the measured phase ends, before the result is
    put together (the parent closes its window on the CPUs' neighbours then)."""
    workload = make_workload(spec)
    life = getattr(workload, "life", None)  # users with a life (rpc.user_life)
    connect = LatencyRecorder()
    async with call_source(spec, workload, connect) as call:
        if spec.share.warmup_requests or spec.settings.warmup_s:
            warmup = Budget.for_phase(
                spec.share.warmup_requests, spec.settings.warmup_s, spec.settings.max_level_s
            )
            warmup.calls_left = _capped(warmup.calls_left, _feed_left(workload))
            warmup.life = life
            await _phase(call, spec, warmup, None, None)
        if before_measuring is not None:
            await before_measuring()
        on_measurement_start()
        if isinstance(call, PerRequestCalls | CheckoutCalls):
            call.recording = True  # connection set-ups count from now on
        mix = mix_of(spec)
        measure = level_recorders(spec.settings.call_details, len(mix))
        if spec.flow is not None:  # a flow's steps and checks, recorded from now on
            measure.steps = StepRecorders()
            workload.steps = measure.steps  # type: ignore[attr-defined]
            measure.checks = CheckRecorders()
            workload.checks = measure.checks  # type: ignore[attr-defined]
        timeline = (
            TimelineRecorder(spec.settings.sample_interval_s)
            if spec.settings.sample_interval_s
            else None
        )
        sampler = (
            asyncio.create_task(sample(timeline, time.process_time, current_rss_bytes))
            if timeline
            else None
        )
        rss_start = current_rss_bytes()
        cpu_start = time.process_time()
        wait_start = run_queue_wait_s(os.getpid())
        wall_start = time.perf_counter()
        feed_left = _feed_left(workload)
        budget = Budget.for_phase(
            spec.share.requests, spec.settings.duration_s, spec.settings.max_level_s, wall_start,
            None if feed_left is not None else shared,  # no more lines to steal
        )  # fmt: skip
        budget.calls_left = _capped(budget.calls_left, feed_left)
        budget.life = life
        cutter = None
        if spec.settings.interval_s:
            window = measure.open_window(spec.settings.interval_s, wall_start)
            live = on_interval or (lambda figures: None)
            cutter = asyncio.create_task(cut_every_interval(window, lambda f: live(
                replace(_offered(spec, (f,))[0], in_flight=budget.in_flight))))  # fmt: skip
        window_calls: list[int] = []
        snapshots = _count_finished_at(spec, measure, wall_start, window_calls)
        if snapshots:
            measure.schedule = ScheduleCount(spec.settings.duration_s)
        try:
            await _phase(
                call, spec, budget, measure, lambda done: on_progress(done, measure.failed)
            )
        finally:
            if cutter is not None:
                cutter.cancel()
            for snapshot in snapshots:
                snapshot.cancel()
            if measure.schedule is not None:
                measure.schedule.drain()
                window_calls += [measure.schedule.before_middle, measure.schedule.before_end]
        wall_s = time.perf_counter() - wall_start
        if on_measurement_end is not None:
            on_measurement_end()
        intervals = _offered(spec, finish(measure.window)) if measure.window else ()
        cpu_s = time.process_time() - cpu_start
        wait_s = max(0.0, run_queue_wait_s(os.getpid()) - wait_start)
        if sampler:
            sampler.cancel()
    per_request = spec.connection_mode in ("per-request", "checkout")
    return LoadResult(
        driver="builtin",
        concurrency=spec.share.concurrency,
        connections=spec.share.connections,
        statuses=dict(measure.statuses),
        latency=measure.level_latency().summary(),
        wall_s=wall_s,
        client_cpu_s=cpu_s,
        client_wait_s=wait_s,
        truncated=budget.truncated,
        connect_latency=connect.summary() if per_request else None,
        rate=spec.share.rate,
        service_latency=measure.service.summary() if spec.share.rate else None,
        schedule_lag=measure.lag.summary() if spec.share.rate else None,
        stream=measure.streams.summary(),
        client_rss_start_bytes=rss_start,
        client_peak_rss_bytes=peak_rss_bytes(),
        client_timeline=timeline.timeline() if timeline else None,
        errors=dict(measure.errors),
        intervals=intervals,
        window_calls=tuple(window_calls) if len(window_calls) == 4 else (),
        details=measure.details if isinstance(measure, DetailedLevelRecorders) else None,
        methods=method_figures(mix, measure),
        steps=step_figures(measure.steps),
        checks=measure.checks.figures() if measure.checks else (),
    )


def mix_of(spec: GeneratorJob) -> list[dict[str, Any]]:
    """A mix's methods as the spec carries them (rpc.call.MethodCall JSON); [] if none."""
    return list((spec.call or {}).get("mix") or ())


def step_figures(steps: StepRecorders | None) -> tuple[MethodFigures, ...]:
    """A flow's steps, in the order they were first made."""
    if not steps:
        return ()
    return tuple(recorder.figures(name, name, 0) for name, recorder in steps.items())


def method_figures(mix: list[dict[str, Any]], measure: LevelRecorders) -> tuple[MethodFigures, ...]:
    if measure.parts is None:
        return ()
    return tuple(
        recorder.figures(
            part.get("label") or part["call"],
            part["call"],
            int(part.get("weight", 1)),
            tuple(part.get("expected") or ()),
        )  # fmt: skip
        for part, recorder in zip(mix, measure.parts, strict=True)
    )


def _count_finished_at(
    spec: GeneratorJob, measure: LevelRecorders, start: float, counts: list[int]
) -> list[asyncio.TimerHandle]:
    """A timed open loop: the calls finished at the middle and at the end of its
    pacer, appended to ``counts`` as the loop reaches those moments (the engine
    then adds what the pacer scheduled before each: ``ScheduleCount``)."""
    duration = spec.settings.duration_s
    if not (spec.share.rate and duration):
        return []
    loop = asyncio.get_running_loop()
    offset = loop.time() - time.perf_counter()  # the phase's start on the loop's clock

    def snapshot() -> None:
        counts.append(sum(measure.statuses.values()))

    return [loop.call_at(start + offset + at, snapshot) for at in (duration / 2, duration)]


def _offered(
    spec: GeneratorJob, intervals: tuple[IntervalFigures, ...]
) -> tuple[IntervalFigures, ...]:
    """An open loop's intervals with the rate its pacer offered in each."""
    if not spec.share.rate:
        return intervals
    return with_offered(intervals, share_pacer(spec).expected_calls)
